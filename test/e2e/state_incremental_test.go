package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestIncrementalCheckpointsOnHDFSSurviveAMKill runs CheckableCount on the pebble backend
// with incremental checkpoints and local recovery, checkpoints on HDFS, at parallelism 2;
// SIGKILLs the AM, leaves an orphaned shared file behind, starts a new AM and a third
// TaskManager. The new AM rebuilds the shared-file counts from the retained checkpoints,
// deletes the orphan and nothing any retained checkpoint lists, restores at parallelism 3
// and the output is exact.
func TestIncrementalCheckpointsOnHDFSSurviveAMKill(t *testing.T) {
	env := hadooptest.Require(t)
	out := t.TempDir()
	args := []string{"--records", "240000", "--keys", "5000", "--rate", "8000", "--output", out}
	h := startHDFSJob(t, env, examples.CheckableCountName, args, 2, "300 ms", "state.checkpoints.num-retained=2",
		"state.backend.type=pebble", "state.backend.pebble.localdir="+t.TempDir(),
		"execution.checkpointing.incremental=true", "state.backend.local-recovery=true")
	h.waitRunning(2)
	first := h.waitCompleted(0)
	seen := h.waitCompleted(h.waitCompleted(first))
	if n := len(sharedInUse(t, h)); n == 0 {
		t.Fatalf("the retained checkpoints (up to %d) list no shared files", seen)
	}

	h.killAM()
	orphan := h.id + "/shared/count_and_sum-9-dead-c1-000001.sst"
	if err := storage.WriteFile(context.Background(), h.ckpt, orphan, []byte("an upload of a checkpoint that never completed")); err != nil {
		t.Fatal(err)
	}
	inUse := sharedInUse(t, h)
	h.startAM()
	h.addTM()
	h.waitRunning(3)
	s := h.waitRestored()
	if s.Latest.Restored == nil || s.Latest.Restored.ID < seen {
		t.Fatalf("new AM restored %+v, want checkpoint ≥ %d", s.Latest.Restored, seen)
	}
	if log := h.amLog(2); !strings.Contains(log, "shared checkpoint files counted from the retained checkpoints") || !strings.Contains(log, "orphansDeleted=") {
		t.Errorf("the new AM's log does not say it counted the shared files and collected orphans")
	}
	if _, err := h.ckpt.Stat(context.Background(), orphan); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the orphaned shared file survived the new AM's start: %v", err)
	}
	// Nothing the retained checkpoints listed went before the new AM's own checkpoints
	// took over (the restored one stays until num-retained newer ones completed).
	restored := s.Latest.Restored.ID
	for name, ids := range inUse {
		if !containsID(ids, restored) {
			continue
		}
		if _, err := h.ckpt.Stat(context.Background(), name); err != nil {
			t.Errorf("shared file %s of the restored checkpoint %d: %v", name, restored, err)
		}
	}
	h.waitCompleted(restored)
	if n := len(sharedInUse(t, h)); n == 0 {
		t.Error("the new AM's checkpoints list no shared files")
	}
	local, downloaded := restoreBytes(t, h.dir)
	t.Logf("restores on the TaskManagers: %d bytes from local state, %d downloaded", local, downloaded)
	h.finish(out)
}

func containsID(ids []int64, id int64) bool {
	for _, i := range ids {
		if i == id {
			return true
		}
	}
	return false
}

// sharedInUse reads the _metadata of every complete checkpoint on HDFS and returns the
// shared files they list (with the checkpoints listing them); each must exist.
func sharedInUse(t *testing.T, h *hdfsJob) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	complete, _ := h.listCheckpoints()
	out := map[string][]int64{}
	for _, id := range complete {
		data, err := storage.ReadFile(ctx, h.ckpt, checkpoint.MetadataPath(h.id, id))
		if errors.Is(err, storage.ErrNotFound) {
			continue // deleted by retention since the listing
		}
		if err != nil {
			t.Fatal(err)
		}
		md, err := checkpoint.DecodeMetadata(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range md.Subtasks {
			for _, hd := range st.Handles {
				if !strings.HasPrefix(hd.Name, h.id+"/shared/") {
					continue
				}
				out[hd.Name] = append(out[hd.Name], id)
				if _, err := h.ckpt.Stat(ctx, hd.Name); err != nil {
					if _, merr := h.ckpt.Stat(ctx, checkpoint.MetadataPath(h.id, id)); errors.Is(merr, storage.ErrNotFound) {
						continue // the checkpoint went meanwhile
					}
					t.Fatalf("checkpoint %d lists %s: %v", id, hd.Name, err)
				}
			}
		}
	}
	return out
}

var restoreLine = regexp.MustCompile(`local_bytes=(\d+) downloaded_files=\d+ downloaded_bytes=(\d+)`)

// restoreBytes adds up what the TaskManagers' restores (logs under dir/log) read locally
// and downloaded.
func restoreBytes(t *testing.T, dir string) (local, downloaded int64) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "log", "*.log"))
	local, downloaded, _ = containerRestoreBytes(t, logs)
	return local, downloaded
}
