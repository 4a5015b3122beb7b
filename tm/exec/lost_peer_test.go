package exec_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/stream"
)

// TestLostPeerNamesTheTaskManager: the data plane of one TaskManager goes away under a
// running attempt (as when its process dies); the subtasks of the other TaskManager fail
// naming it as their lost peer, so the AM counts those failures as part of its loss. The
// subtasks of the TaskManager whose own plane closed name no peer.
func TestLostPeerNamesTheTaskManager(t *testing.T) {
	job := stream.NewJob("peers", 2, 0)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 1 << 40, Rate: 2000})
	stream.Print(stream.Rebalance(nums, "spread"), "print", discard{})
	am := newFakeAM(t, job, 2)
	am.deploy(2)
	am.waitFor("every subtask running", func() bool { return am.allInState(core.TaskRunning) })
	if err := am.tms[1].plane.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(60 * time.Second)
	for {
		am.mu.Lock()
		failures := slices.Clone(am.failures)
		ch := am.changed
		am.mu.Unlock()
		var onTM0 []string
		for _, f := range failures {
			if strings.Contains(f, " on tm-0 ") {
				onTM0 = append(onTM0, f)
			}
			if strings.Contains(f, " on tm-1 ") && !strings.Contains(f, `lost peer ""`) {
				t.Fatalf("a subtask of the TaskManager whose plane closed blames a peer: %s", f)
			}
		}
		if len(onTM0) > 0 {
			for _, f := range onTM0 {
				if !strings.Contains(f, `lost peer "tm-1"`) || !strings.Contains(f, "lost connection to peer") {
					t.Fatalf("failure on tm-0 does not name tm-1 as its lost peer: %s", f)
				}
			}
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no subtask of tm-0 failed after tm-1's plane closed; failures %v", failures)
		}
	}
}
