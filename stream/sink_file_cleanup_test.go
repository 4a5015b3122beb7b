package stream_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

// hiddenNames lists the names in dir starting with "." (in-progress, pending and uncommitted
// files of the sink).
func hiddenNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestFileSinkCleansLeftoversWithProductionNames: part names in production carry the AM's
// run id (<runid>.<attempt>). An attempt killed with a file in progress and a pre-committed
// file of a checkpoint that never completed leaves both behind; the next attempt (same AM,
// or a recovered AM with another run id whose attempts count from 1 again) restores an
// older checkpoint, commits its pending file and deletes every leftover of older attempts,
// but not the file a sibling subtask of its own attempt is writing.
func TestFileSinkCleansLeftoversWithProductionNames(t *testing.T) {
	for _, tc := range []struct {
		name           string
		oldRun, newRun string
		oldAtt, newAtt int64
	}{
		{"next attempt of the same AM", "0a1b2c3d", "0a1b2c3d", 1, 2},
		{"first attempt of a recovered AM", "0a1b2c3d", "4e5f6a7b", 3, 1},
		{"recovered AM, attempt numbers above the old ones", "0a1b2c3d", "4e5f6a7b", 1, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(op stream.Operator, s ...string) {
				t.Helper()
				for _, v := range s {
					if err := op.Process(v, 0, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The old attempt: two subtasks; subtask 0 pre-commits "a" in checkpoint 1 and
			// "b" in checkpoint 2 (never completed) and is killed while writing "c";
			// subtask 1 is killed while writing "z".
			old := func(subtask int) (stream.Operator, stream.Runtime) {
				rt := runtimeFor("sink", 2, subtask, 128)
				rt.RunID, rt.Attempt, rt.CheckpointingEnabled = tc.oldRun, tc.oldAtt, true
				op := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
				open(t, op, rt, nil)
				t.Cleanup(func() { op.Close() })
				return op, rt
			}
			s0, rt0 := old(0)
			s1, _ := old(1)
			write(s0, "a")
			chk1 := snapshotOp(t, s0, rt0, 1)
			write(s0, "b")
			_ = snapshotOp(t, s0, rt0, 2)
			write(s0, "c")
			write(s1, "z")
			if got := hiddenNames(t, dir); len(got) < 3 {
				t.Fatalf("the killed attempt left %v, want an in-progress file per subtask and a pending file", got)
			}

			// The new attempt restores checkpoint 1. Subtask 1 opens first and starts a file.
			neu := func(subtask int) stream.Operator {
				rt := runtimeFor("sink", 2, subtask, 128)
				rt.RunID, rt.Attempt, rt.CheckpointingEnabled = tc.newRun, tc.newAtt, true
				op := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
				open(t, op, rt, restoreFor(t, rt, [][]byte{chk1}))
				t.Cleanup(func() { op.Close() })
				return op
			}
			n1 := neu(1)
			write(n1, "y")
			mine := hiddenNames(t, dir)
			_ = neu(0)
			if got, want := committed(t, dir), []string{"a"}; !slices.Equal(got, want) {
				t.Fatalf("committed after restore: %v, want %v", got, want)
			}
			left := hiddenNames(t, dir)
			var sibling []string
			for _, n := range left {
				if !strings.Contains(n, tc.newRun+"."+strconv.FormatInt(tc.newAtt, 10)+"-1-") {
					t.Errorf("leftover %q of an older attempt after the restore (all hidden files: %v)", n, left)
				} else {
					sibling = append(sibling, n)
				}
			}
			if len(sibling) != 1 || !slices.Contains(mine, sibling[0]) {
				t.Errorf("the sibling subtask's in-progress file: have %v, had %v", sibling, mine)
			}
		})
	}
}
