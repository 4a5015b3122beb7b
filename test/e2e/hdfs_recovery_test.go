package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestHDFSRecoveryAfterAMKill runs CheckableCount with checkpoints on HDFS at
// parallelism 2, SIGKILLs the AM, leaves a fake incomplete checkpoint behind, starts a
// new AM for the same job id and a third TaskManager: the TaskManagers reconnect, the
// new AM restores the newest complete checkpoint at parallelism 3, deletes the
// incomplete one, keeps state.checkpoints.num-retained on HDFS, and the output is exact.
func TestHDFSRecoveryAfterAMKill(t *testing.T) {
	env := hadooptest.Require(t)
	out := t.TempDir()
	args := []string{"--records", "240000", "--keys", "13", "--rate", "8000", "--output", out}
	h := startHDFSJob(t, env, examples.CheckableCountName, args, 2, "300 ms", "state.checkpoints.num-retained=2")
	h.waitRunning(2)
	first := h.waitCompleted(0)
	seen := h.waitCompleted(first + 1) // at least three: retention has deleted some
	// Right after a completion the delete of the oldest may still be under way; between
	// completions HDFS holds exactly num-retained complete checkpoints.
	testkit.WaitFor(t, "num-retained (2) complete checkpoints on HDFS", func() (bool, error) {
		complete, _ := h.listCheckpoints()
		return len(complete) == 2, fmt.Errorf("complete checkpoints %v", complete)
	})

	h.killAM()
	t.Logf("SIGKILLed the AM after checkpoint %d", seen)
	fake := int64(100000)
	if err := storage.WriteFile(context.Background(), h.ckpt, checkpoint.ChkDir(h.id, fake)+"/numbers-0.state", []byte("half a checkpoint")); err != nil {
		t.Fatal(err)
	}
	h.startAM()
	h.addTM()
	h.waitRunning(3)

	s := h.waitRestored()
	if s.Latest.Restored == nil || s.Latest.Restored.ID < seen {
		t.Fatalf("new AM restored %+v, want checkpoint ≥ %d (the newest complete one)", s.Latest.Restored, seen)
	}
	if !strings.HasPrefix(s.Latest.Restored.ExternalPath, h.ckptURI+"/"+h.id+"/chk-") {
		t.Errorf("restored external_path %q, want under %s", s.Latest.Restored.ExternalPath, h.ckptURI)
	}
	log := h.amLog(2)
	for _, want := range []string{"recovering from checkpoint", "checkpoint=" + strconv.FormatInt(s.Latest.Restored.ID, 10),
		"deleting incomplete checkpoint", "checkpoint=" + strconv.FormatInt(fake, 10)} {
		if !strings.Contains(log, want) {
			t.Errorf("the new AM's log lacks %q", want)
		}
	}
	testkit.WaitFor(t, "the incomplete checkpoint deleted", func() (bool, error) {
		_, incomplete := h.listCheckpoints()
		for _, id := range incomplete {
			if id == fake {
				return false, fmt.Errorf("chk-%d still there", fake)
			}
		}
		return true, nil
	})
	// New ids continue above every chk-<n> seen, the incomplete one included.
	if next := h.waitCompleted(s.Latest.Restored.ID); next <= fake {
		t.Errorf("first checkpoint of the new AM is %d, want above %d", next, fake)
	}

	h.finish(out)
	// The job finished: execution.checkpointing.externalized-checkpoint-retention's default
	// (DELETE_ON_CANCELLATION) deletes its checkpoints.
	if left, err := h.ckpt.List(context.Background(), h.id); err != nil && !errors.Is(err, storage.ErrNotFound) || len(left) != 0 {
		t.Errorf("after the job finished %s/%s holds %v (%v), want its checkpoints deleted", h.ckptURI, h.id, left, err)
	}
}

// TestHDFSRestoreFallsBackFromDamagedCheckpoint: a state file of the newest complete
// checkpoint is truncated while the AM is down; the new AM validates the checkpoint
// against its _metadata, falls back to the previous one, says so, and the output is
// still exact.
func TestHDFSRestoreFallsBackFromDamagedCheckpoint(t *testing.T) {
	env := hadooptest.Require(t)
	out := t.TempDir()
	args := []string{"--records", "160000", "--keys", "7", "--rate", "8000", "--output", out}
	// Task adoption off: the new AM must restore (from the fallback), not adopt the
	// running tasks, for the damaged checkpoint to matter.
	h := startHDFSJob(t, env, examples.CheckableCountName, args, 2, "300 ms", "state.checkpoints.num-retained=3",
		"jobmanager.failover.task-adoption.timeout=0")
	h.waitRunning(2)
	h.waitCompleted(h.waitCompleted(0) + 1)
	h.killAM()
	// The killed AM's last RPCs may still be applied by the namenode (a _metadata rename
	// in flight): remove the unfinished checkpoints above the newest complete one, as the
	// new AM would, so that the newest complete checkpoint is settled before damaging it.
	complete, incomplete := h.listCheckpoints()
	for _, id := range incomplete {
		if len(complete) == 0 || id > complete[len(complete)-1] {
			if err := h.ckpt.Delete(context.Background(), checkpoint.ChkDir(h.id, id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	complete, _ = h.listCheckpoints()
	if len(complete) < 2 {
		t.Fatalf("HDFS holds complete checkpoints %v, want at least 2", complete)
	}
	newest, previous := complete[len(complete)-1], complete[len(complete)-2]
	ctx := context.Background()
	raw, err := storage.ReadFile(ctx, h.ckpt, checkpoint.MetadataPath(h.id, newest))
	if err != nil {
		t.Fatal(err)
	}
	md, err := checkpoint.DecodeMetadata(raw)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, sub := range md.Subtasks {
		for _, hd := range sub.Handles {
			if hd.Size > 1 && victim == "" {
				victim = hd.Name
			}
		}
	}
	if victim == "" {
		t.Fatalf("checkpoint %d lists no state file to damage: %+v", newest, md)
	}
	data, err := storage.ReadFile(ctx, h.ckpt, victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFile(ctx, h.ckpt, victim, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	t.Logf("truncated %s of checkpoint %d to %d bytes", victim, newest, len(data)/2)

	h.startAM()
	h.waitRunning(2)
	// The first restore is the fallback; a rescale right after (TaskManagers register one
	// by one) may restore a newer checkpoint the new AM took itself (id above newest).
	s := h.waitRestored()
	if id := s.Latest.Restored.ID; id != previous && id <= newest {
		t.Fatalf("new AM restored checkpoint %d, want the previous complete checkpoint %d", id, previous)
	}
	log := h.amLog(2)
	for _, want := range []string{"falling back", "checkpoint=" + strconv.FormatInt(newest, 10),
		"fallback=" + strconv.FormatInt(previous, 10), victim,
		`msg="recovering from checkpoint" job=CheckableCount jobID=` + h.id + " checkpoint=" + strconv.FormatInt(previous, 10) + " "} {
		if !strings.Contains(log, want) {
			t.Errorf("the new AM's log lacks %q", want)
		}
	}
	h.finish(out)
}
