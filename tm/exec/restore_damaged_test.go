package exec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/tm/exec"
)

// TestRestoreRefusesDamagedCheckpoint deletes one keyed-state file that the checkpoint's
// _metadata lists: the restore must fail, naming the file, instead of quietly starting
// that key-group range from empty state (which would make the output wrong).
func TestRestoreRefusesDamagedCheckpoint(t *testing.T) {
	out := t.TempDir()
	job, err := examples.BuildCheckableCount([]string{"--records", "20000", "--keys", "7", "--rate", "2500", "--output", out})
	if err != nil {
		t.Fatal(err)
	}
	am := newFakeAM(t, job, 2)
	am.checkpointing = true
	ctx, cancel := context.WithCancel(context.Background())
	go am.run(ctx, 40*time.Millisecond)
	am.deploy(2)
	am.waitFor("a checkpoint", func() bool { return am.completedIn >= 1 })
	cancel() // no more checkpoints: the restore point stays the one we damage

	am.mu.Lock()
	restore := am.completed
	am.mu.Unlock()
	victim := exec.CheckpointDir(am.jobID, restore) + "/" + exec.StateFileName("count_and_sum", 1)
	if err := am.store.Delete(context.Background(), victim); err != nil {
		t.Fatal(err)
	}
	am.deploy(2)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		am.mu.Lock()
		failures := strings.Join(am.failures, "\n")
		am.mu.Unlock()
		if failures != "" {
			if !strings.Contains(failures, victim) || !strings.Contains(failures, "listed in _metadata but missing") {
				t.Fatalf("restore failed, but not because of the missing %s:\n%s", victim, failures)
			}
			if !strings.Contains(failures, "unrecoverable=true") {
				t.Fatalf("a damaged checkpoint must fail the restore as unrecoverable:\n%s", failures)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("restoring checkpoint %d without %s did not fail", restore, victim)
}
