package am

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/tidestream/tide/storage"
)

// lateWriter is a checkpoint storage where, after a delete of the job's directory, a
// TaskManager's upload to shared/ that was still finishing ends: it commits its file
// (commit), or it is discarded (the upload was cancelled with the job). Either way it can
// bring back <job>/shared/: with the file, or empty where its temporary file was made and
// then removed (file://; on HDFS an upload reaches the namenode only when it commits). It
// does so after the first times deletes (every delete: times < 0).
type lateWriter struct {
	storage.Storage
	t      *testing.T
	job    string
	commit bool
	times  int
}

func (l *lateWriter) Delete(ctx context.Context, name string) error {
	if err := l.Storage.Delete(ctx, name); err != nil {
		return err
	}
	if name != l.job || l.times == 0 {
		return nil
	}
	l.times--
	w, err := l.Storage.Create(ctx, path.Join(sharedDir(l.job), "count-0-u-c9-000042.sst"))
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := w.Write([]byte("a table")); err != nil {
		l.t.Fatal(err)
	}
	if l.commit {
		return w.Commit(ctx)
	}
	return w.Abort(ctx)
}

// TestRemoveJobLeavesNoSharedDir: the job's directory goes at job end (retention) with its
// checkpoints and shared files, also when a late upload brings shared/ back after the
// first delete; a writer that keeps coming back is reported by name.
func TestRemoveJobLeavesNoSharedDir(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Storage) {
		for _, commit := range []bool{false, true} {
			ctx := context.Background()
			plain := &checkpointStore{st: st, jobID: recoverJobID}
			writeSharedCheckpoint(t, plain, 1, "count-0-u-c1-000004.sst")
			writeSharedCheckpoint(t, plain, 2, "count-0-u-c1-000004.sst", "count-0-u-c2-000006.sst")

			late := &lateWriter{Storage: st, t: t, job: recoverJobID, commit: commit, times: 1}
			s := &checkpointStore{st: late, jobID: recoverJobID}
			if err := s.removeJob(ctx); err != nil {
				t.Fatalf("removeJob with one late upload (committed: %v): %v", commit, err)
			}
			if left, err := st.List(ctx, recoverJobID); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("after removeJob (late upload committed: %v) %s/%s holds %v (%v), want it gone", commit, st.URI(), recoverJobID, left, err)
			}
			if late.times != 0 {
				t.Fatalf("the late upload did not run (times left %d): the test proves nothing", late.times)
			}

			// A single delete followed by the late upload leaves shared/ behind.
			late.times = 1
			if err := late.Delete(ctx, recoverJobID); err != nil {
				t.Fatal(err)
			}
			left, err := st.List(ctx, recoverJobID)
			switch {
			case !commit && errors.Is(err, storage.ErrNotFound) && strings.HasPrefix(st.URI(), "hdfs://"):
				// A discarded upload never reached the namenode.
			case err != nil || len(left) != 1 || left[0].Name != "shared" || !left[0].IsDir:
				t.Fatalf("a single delete followed by a late upload (committed: %v) left %v (%v), want just shared/", commit, left, err)
			}

			late.times = -1
			comesBack := commit || !strings.HasPrefix(st.URI(), "hdfs://")
			if err := s.removeJob(ctx); comesBack && (err == nil || !strings.Contains(err.Error(), "[shared]") || !strings.Contains(err.Error(), recoverJobID)) {
				t.Fatalf("removeJob with an upload that keeps coming back (committed: %v): %v, want an error naming %s and shared", commit, err, recoverJobID)
			}
			if err := st.Delete(ctx, recoverJobID); err != nil {
				t.Fatal(err)
			}
		}
	})
}
