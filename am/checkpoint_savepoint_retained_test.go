package am

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// TestLoadRetainedIncrementalCheckpoint loads a retained incremental checkpoint in place
// (<checkpoints>/<job>/chk-<n>, its tables in <job>/shared/ beside it) with
// --fromSavepoint: the storage is rooted at the checkpoints directory so the shared names
// resolve where its _metadata lists them; a NATIVE savepoint copy of the same checkpoint
// still resolves them to its own shared/; a missing shared table makes it damaged.
func TestLoadRetainedIncrementalCheckpoint(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Storage) {
		ctx := context.Background()
		s := &checkpointStore{st: st, jobID: recoverJobID}
		writeSharedCheckpoint(t, s, 2, "a.sst")
		writeSharedCheckpoint(t, s, 3, "a.sst", "b.sst")
		root := strings.TrimSuffix(st.URI(), "/")
		loc := root + "/" + checkpoint.ChkDir(recoverJobID, 3)
		for _, suffix := range []string{"", "/_metadata"} {
			sp, _, err := loadSavepoint(ctx, loc+suffix, savepointJob(128, false), false)
			if err != nil {
				t.Fatalf("loadSavepoint(%s): %v", loc+suffix, err)
			}
			if sp.location != loc || strings.TrimSuffix(sp.storageURI, "/") != root || sp.dir != checkpoint.ChkDir(recoverJobID, 3) {
				t.Errorf("loaded %s as storage %s dir %s, want storage %s dir %s", sp.location, sp.storageURI, sp.dir, root, checkpoint.ChkDir(recoverJobID, 3))
			}
			if got, want := sp.resolve(sharedFile("b.sst")), sharedFile("b.sst"); got != want {
				t.Errorf("resolve shared = %s, want %s", got, want)
			}
			if got, want := sp.resolve(checkpoint.ChkDir(recoverJobID, 3)+"/count-0.state"), checkpoint.ChkDir(recoverJobID, 3)+"/count-0.state"; got != want {
				t.Errorf("resolve own = %s, want %s", got, want)
			}
		}

		a := &AM{cfg: Config{JobID: recoverJobID, Storage: st}}
		native, err := a.copySavepoint(ctx, root+"/savepoints", savepointDirName(recoverJobID), 3)
		if err != nil {
			t.Fatal(err)
		}
		sp, _, err := loadSavepoint(ctx, native, savepointJob(128, false), false)
		if err != nil {
			t.Fatalf("loadSavepoint(%s): %v", native, err)
		}
		if got, want := sp.resolve(sharedFile("b.sst")), path.Join(sp.dir, "shared", "b.sst"); got != want || sp.storageURI+"/"+sp.dir != native {
			t.Errorf("NATIVE copy %s (storage %s dir %s): resolve shared = %s, want %s", native, sp.storageURI, sp.dir, got, want)
		}

		if err := st.Delete(ctx, sharedFile("b.sst")); err != nil {
			t.Fatal(err)
		}
		_, _, err = loadSavepoint(ctx, loc, savepointJob(128, false), false)
		if err == nil || !errors.Is(err, errBadSavepoint) || !strings.Contains(err.Error(), "b.sst") {
			t.Fatalf("loadSavepoint without a shared table = %v, want a refusal naming b.sst", err)
		}
	})
}
