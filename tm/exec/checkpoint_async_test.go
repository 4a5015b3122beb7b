package exec_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/localstate"
)

// failingCreate fails the creation of files whose name fail accepts.
type failingCreate struct {
	storage.Storage
	fail   func(name string) bool
	failed atomic.Int64
}

func (f *failingCreate) Create(ctx context.Context, name string) (storage.Writer, error) {
	if f.fail(name) {
		f.failed.Add(1)
		return nil, errors.New("injected upload failure")
	}
	return f.Storage.Create(ctx, name)
}

// TestCheckableCountExactlyOnceWithAsyncSnapshots runs CheckableCount with its keyed state
// in pebble, checkpoints written in the background, through rescales 2 → 3 → 1; the
// upload of one checkpoint's state fails, which declines that checkpoint and nothing else.
func TestCheckableCountExactlyOnceWithAsyncSnapshots(t *testing.T) {
	for _, backend := range []state.Type{state.Pebble, state.Hashmap} {
		t.Run(string(backend), func(t *testing.T) {
			out := t.TempDir()
			args := []string{"--records", "20000", "--keys", "500", "--rate", "2500", "--output", out}
			job, err := examples.BuildCheckableCount(args)
			if err != nil {
				t.Fatal(err)
			}
			var fc *failingCreate
			dir := t.TempDir()
			am := newFakeAM(t, job, 2, func(c *exec.Config) {
				c.StateBackend = exec.StateBackendConfig{Type: backend, Dir: dir}
				if fc == nil {
					fc = &failingCreate{Storage: c.Storage, fail: func(name string) bool {
						return strings.Contains(name, "/chk-2/") && strings.HasSuffix(name, ".state")
					}}
				}
				c.Storage = fc
			})
			am.checkpointing = true
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go am.run(ctx, 40*time.Millisecond)

			am.deploy(2)
			am.waitFor("two checkpoints at parallelism 2", func() bool { return am.completedIn >= 2 })
			am.deploy(3)
			am.waitFor("two checkpoints at parallelism 3", func() bool { return am.completedIn >= 2 })
			am.deploy(1)
			am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })

			checkExactOutput(t, out, args, "")
			if fc.failed.Load() == 0 {
				t.Fatal("no upload failed: the test did not decline a checkpoint")
			}
			am.mu.Lock()
			defer am.mu.Unlock()
			if len(am.failures) > 0 {
				t.Fatalf("failures: %v", am.failures)
			}
		})
	}
}

// TestIncrementalCheckpointsWithLocalRecovery runs CheckableCount on pebble with
// incremental checkpoints and local recovery: later checkpoints list tables an earlier
// one uploaded, a restart at the same parallelism restores from the TaskManagers' local
// stores without downloading a byte, and rescales 2 → 3 → 1 keep the output exact.
func TestIncrementalCheckpointsWithLocalRecovery(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "30000", "--keys", "2000", "--rate", "3000", "--output", out}
	job, err := examples.BuildCheckableCount(args)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmIndex := 0
	am := newFakeAM(t, job, 2, func(c *exec.Config) {
		c.StateBackend = exec.StateBackendConfig{Type: state.Pebble, Dir: dir, Incremental: true, LocalRecovery: true}
		ls, err := localstate.Open(filepath.Join(dir, fmt.Sprintf("local-%d", tmIndex)), nil)
		if err != nil {
			t.Fatal(err)
		}
		tmIndex++
		c.LocalState = ls
	})
	am.checkpointing = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go am.run(ctx, 40*time.Millisecond)

	am.deploy(2)
	// cond runs under am.mu: the latest checkpoint lists shared tables, some of them
	// uploaded by an earlier checkpoint.
	var shared, reused int
	am.waitFor("a checkpoint reusing tables of an earlier one", func() bool {
		if am.completed == 0 {
			return false
		}
		shared, reused = sharedTables(t, am, am.completed)
		return shared > 0 && reused > 0
	})
	t.Logf("checkpoint lists %d shared tables, %d uploaded by an earlier checkpoint", shared, reused)

	// The smallest database file the checkpoint the restart restores lists: downloading
	// any one of them downloads at least this many bytes.
	smallest := int64(-1)
	for _, st := range readMetadata(t, am, am.completed).Subtasks {
		for _, h := range st.Handles {
			if strings.Contains(h.Name, "/shared/") && (smallest < 0 || h.Size < smallest) {
				smallest = h.Size
			}
		}
	}
	// A restart at the same parallelism: every subtask is on the TaskManager it was on.
	am.deploy(2)
	am.waitFor("one checkpoint after the restart", func() bool { return am.completedIn >= 1 })
	var local, downloaded int64
	for _, tm := range am.tms {
		for _, m := range tm.exec.Metrics() {
			local += m.RestoreLocalBytes
			downloaded += m.RestoreDownloadedBytes
		}
	}
	// Only the other subtasks' list state (source splits: headers and a few bytes each)
	// comes from storage; no database file and no keyed block does.
	if local == 0 || downloaded >= smallest {
		t.Fatalf("restart at the same parallelism read %d bytes locally and downloaded %d; want > 0 local and fewer downloaded than the smallest database file (%d bytes)", local, downloaded, smallest)
	}
	t.Logf("restart: %d bytes from local state, %d downloaded", local, downloaded)

	am.deploy(3)
	am.waitFor("two checkpoints at parallelism 3", func() bool { return am.completedIn >= 2 })
	am.deploy(1)
	finishExactly(t, am, out, args, "")
}

// sharedTables counts the shared tables checkpoint id lists and those an earlier
// checkpoint uploaded (the c<id> in their names).
func sharedTables(t *testing.T, am *fakeAM, latest int64) (shared, reused int) {
	md := readMetadata(t, am, latest)
	for _, st := range md.Subtasks {
		for _, h := range st.Handles {
			if !strings.Contains(h.Name, "/shared/") {
				continue
			}
			shared++
			var id int64
			if i := strings.LastIndex(h.Name, "-c"); i >= 0 {
				fmt.Sscanf(h.Name[i+2:], "%d", &id)
			}
			if id > 0 && id < latest {
				reused++
			}
		}
	}
	return shared, reused
}

func readMetadata(t *testing.T, am *fakeAM, id int64) checkpoint.Metadata {
	t.Helper()
	data, err := storage.ReadFile(context.Background(), am.store, checkpoint.MetadataPath(am.jobID, id))
	if err != nil {
		t.Fatal(err)
	}
	md, err := checkpoint.DecodeMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestIncrementalRestoreReadsWritersRealRanges restores an incremental checkpoint whose
// writers owned key-group ranges other than the equal split (as sticky placement deploys
// them) at a parallelism where a new subtask's range overlaps an old writer's real range
// but not that writer's equal-split range. Its state must come from that writer's
// database: the output stays exact.
func TestIncrementalRestoreReadsWritersRealRanges(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "20000", "--keys", "2000", "--rate", "4000", "--output", out}
	job, err := examples.BuildCheckableCount(args)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	am := newFakeAM(t, job, 2, func(c *exec.Config) {
		c.StateBackend = exec.StateBackendConfig{Type: state.Pebble, Dir: dir, Incremental: true}
	})
	maxP := 0
	for _, v := range am.graph.Vertices {
		maxP = v.EffectiveMaxParallelism()
	}
	if maxP < 8 {
		t.Fatalf("max parallelism %d: the ranges below need at least 8 key groups", maxP)
	}
	// p=2: writer 0 owns 0..(3/4·maxP)-1, its equal split would end at maxP/2-1.
	// p=3: subtask 1 owns a range inside writer 0's real range, above its equal split.
	q := maxP / 4
	am.keyGroups = func(p int) ([]int, []int) {
		switch p {
		case 2:
			return []int{0, 3 * q}, []int{3*q - 1, maxP - 1}
		case 3:
			return []int{0, 2*q + 1, 3*q - 1}, []int{2 * q, 3*q - 2, maxP - 1}
		}
		t.Fatalf("no ranges for parallelism %d", p)
		return nil, nil
	}
	am.checkpointing = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go am.run(ctx, 40*time.Millisecond)

	am.deploy(2)
	am.waitFor("two checkpoints at parallelism 2", func() bool { return am.completedIn >= 2 })
	am.deploy(3)
	finishExactly(t, am, out, args, ": state of the moved key groups was not restored")
}

func TestManifestKeyGroups(t *testing.T) {
	for _, tc := range []struct {
		name       string
		start, end int
		ok         bool
	}{
		{"chk-3/keyed-1.kg0-63.pebble", 0, 63, true},
		{"chk-3/keyed-1.kg64-127.pebble", 64, 127, true},
		{"chk-3/a.kg-b-2.kg5-4.pebble", 5, 4, true}, // an empty range (start = end+1)
		{"chk-3/keyed-1.pebble", 0, 0, false},       // a manifest named before ranges were
		{"chk-3/keyed-1.kg9-x.pebble", 0, 0, false},
		{"chk-3/keyed-1.kg9.pebble", 0, 0, false},
		{"chk-3/keyed-1.kg9-3.pebble", 0, 0, false},
	} {
		start, end, ok := exec.ManifestKeyGroups(tc.name)
		if ok != tc.ok || ok && (start != tc.start || end != tc.end) {
			t.Errorf("ManifestKeyGroups(%q) = %d, %d, %v; want %d, %d, %v", tc.name, start, end, ok, tc.start, tc.end, tc.ok)
		}
	}
}

// checkExactOutput compares CheckableCount's committed output in out with the exact answer
// for args; why (may be empty) ends the failure message.
func checkExactOutput(t *testing.T, out string, args []string, why string) {
	t.Helper()
	got, err := examples.ReadCommittedOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := examples.ExpectedOutput(args)
	if !slices.Equal(got, want) {
		t.Fatalf("output differs from the exact answer (%d lines, want %d)%s", len(got), len(want), why)
	}
}

// finishExactly waits for every subtask to finish, checks the output (hint names what
// a wrong answer would mean) and that no subtask failed.
func finishExactly(t *testing.T, am *fakeAM, out string, args []string, hint string) {
	t.Helper()
	am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })
	checkExactOutput(t, out, args, hint)
	am.mu.Lock()
	defer am.mu.Unlock()
	if len(am.failures) > 0 {
		t.Fatalf("failures: %v", am.failures)
	}
}
