package am

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

func sharedFile(name string) string { return sharedDir(recoverJobID) + "/" + name }

// writeSharedCheckpoint writes complete checkpoint id whose subtask lists the shared
// files (written if missing) besides its own state file.
func writeSharedCheckpoint(t *testing.T, s *checkpointStore, id int64, shared ...string) {
	t.Helper()
	ctx := context.Background()
	state := fmt.Sprintf("%s/count-0.state", checkpoint.ChkDir(s.jobID, id))
	handles := []checkpoint.StateHandle{{Name: state, Size: 10}}
	if err := storage.WriteFile(ctx, s.st, state, bytes.Repeat([]byte{'s'}, 10)); err != nil {
		t.Fatal(err)
	}
	for _, n := range shared {
		writeShared(t, s.st, n)
		handles = append(handles, checkpoint.StateHandle{Name: sharedFile(n), Size: 5})
	}
	done := checkpoint.Completed{ID: id, Attempt: 1, Trigger: time.UnixMilli(1_000_000), Duration: time.Second,
		Handles: []checkpoint.SubtaskState{{Subtask: checkpoint.Subtask{Vertex: "count", Index: 0}, Handles: handles}}}
	if err := s.complete(ctx, done, map[string]int{"count": 128}, nil); err != nil {
		t.Fatal(err)
	}
}

func writeShared(t *testing.T, st storage.Storage, n string) {
	t.Helper()
	if _, err := st.Stat(context.Background(), sharedFile(n)); err == nil {
		return
	}
	if err := storage.WriteFile(context.Background(), st, sharedFile(n), []byte("table")); err != nil {
		t.Fatal(err)
	}
}

func listShared(t *testing.T, st storage.Storage) []string {
	t.Helper()
	entries, err := st.List(context.Background(), sharedDir(recoverJobID))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// TestSharedFilesSurviveANewAMAndGoWithTheirLastCheckpoint: a new AM rebuilds the counts
// of the shared files from the retained checkpoints' _metadata, deletes orphans (of a
// failed checkpoint and of one in flight when the old AM died) and nothing in use; a
// retained checkpoint's deletion then deletes exactly the files no other one lists.
func TestSharedFilesSurviveANewAMAndGoWithTheirLastCheckpoint(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Storage) {
		s := &checkpointStore{st: st, jobID: recoverJobID}
		a, b, c, d := "v-0-u-c1-000004.sst", "v-0-u-c1-000005.sst", "v-0-u-c2-000007.sst", "v-0-u-c3-000009.sst"
		writeSharedCheckpoint(t, s, 1, a, b)
		writeSharedCheckpoint(t, s, 2, b, c)
		writeSharedCheckpoint(t, s, 3, c, d)
		failed, inFlight := "v-1-u-c2-000008.sst", "v-0-u-c4-000011.sst"
		writeShared(t, st, failed)
		writeShared(t, st, inFlight)

		co, logs := newRecoverCoordinator(t, st, 2)
		latest, err := co.recoverOwn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		co.wait()
		if latest != 3 {
			t.Fatalf("recovered %d, want 3", latest)
		}
		if got, want := listShared(t, st), []string{b, c, d}; !slices.Equal(got, want) {
			t.Fatalf("shared/ after recovery: %v, want %v\n%s", got, want, logs)
		}
		if got := co.shared.counts; got[sharedFile(b)] != 1 || got[sharedFile(c)] != 2 || got[sharedFile(d)] != 1 || len(got) != 3 {
			t.Fatalf("counts %v", got)
		}
		// Retention deletes checkpoint 2: b goes (no one else lists it), c stays (3 lists it).
		co.discard(2)
		co.wait()
		if got, want := listShared(t, st), []string{c, d}; !slices.Equal(got, want) {
			t.Fatalf("shared/ after deleting checkpoint 2: %v, want %v", got, want)
		}
		// A checkpoint listing b (deleted) or a file that is not there cannot complete.
		unknown, gone := co.shared.uncounted([]string{sharedFile(b), sharedFile(c), sharedFile("v-0-u-c5-000020.sst")})
		if !slices.Equal(gone, []string{sharedFile(b)}) || !slices.Equal(unknown, []string{sharedFile("v-0-u-c5-000020.sst")}) {
			t.Fatalf("uncounted: unknown %v gone %v", unknown, gone)
		}
		if err := s.checkShared(context.Background(), 5, nil, gone); err == nil || !strings.Contains(err.Error(), "already deleted") {
			t.Fatalf("a checkpoint listing a deleted file: %v", err)
		}
		if err := s.checkShared(context.Background(), 5, unknown, nil); err == nil || !strings.Contains(err.Error(), "v-0-u-c5-000020.sst") {
			t.Fatalf("a checkpoint listing a missing file: %v", err)
		}
		writeShared(t, st, "v-0-u-c5-000020.sst")
		if err := s.checkShared(context.Background(), 5, unknown, nil); err != nil {
			t.Fatalf("a new upload: %v", err)
		}
		// Checkpoint 3 is still valid: its shared files resolve beside chk-3.
		if _, err := s.validate(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		// Collecting after checkpoint 5 completes deletes the unlisted c5 upload only
		// when its checkpoint is <= the completed one.
		co.collectOrphans(4)
		co.wait()
		if got := listShared(t, st); !slices.Contains(got, "v-0-u-c5-000020.sst") {
			t.Fatalf("an upload of checkpoint 5 was collected after checkpoint 4: %v", got)
		}
		co.collectOrphans(5)
		co.wait()
		if got, want := listShared(t, st), []string{c, d}; !slices.Equal(got, want) {
			t.Fatalf("shared/ after collecting up to 5: %v, want %v", got, want)
		}
	})
}

func TestSharedUploader(t *testing.T) {
	for name, want := range map[string]int64{
		"job/shared/v-0-ab12-c7-000012.sst":    7,
		"job/shared/my-c-op-1-ab-c12-0001.sst": 12,
		"job/shared/x.sst":                     0,
		"job/shared/v-c-0001.sst":              0,
		path.Join("j", "shared", "a-c0-1.sst"): 0,
	} {
		if got := sharedUploader(name); got != want {
			t.Errorf("sharedUploader(%s) = %d, want %d", name, got, want)
		}
	}
}
