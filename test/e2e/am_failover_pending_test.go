package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// What was pending when the AM died survives its failover (issue 13): a two-phase sink's
// pre-committed files and an in-flight checkpoint.

// The AM SIGKILLs itself (am.CrashPointEnv) right after a checkpoint's _metadata is
// written and before any TaskManager hears that it completed: the exactly-once file sink
// of CheckableCount's --timestamps holds that checkpoint's files pre-committed (hidden
// .pending files). The new AM adopts
// the running subtasks and they commit those files exactly once: every file pending at
// the crash becomes visible, the committed output is exact, and records kept reaching the
// sinks while the AM was away.
func TestAMFailoverCommitsPendingSinkFiles(t *testing.T) {
	ckpt, out, stamps := t.TempDir(), t.TempDir(), t.TempDir()
	dyn := adoptingReactive(ckpt)
	const records = 80000
	args := stampedCountArgs(records, out, stamps)
	const crashAt = 6
	r := testkit.StartAMRestartCluster(t, tideBin, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName,
		JobArgs: args, TaskManagers: 2, Env: []string{am.CrashPointEnv + "=checkpoint-completed:" + strconv.Itoa(crashAt)}})
	c := r.C
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	select {
	case <-c.AMDone():
	case <-time.After(3 * time.Minute):
		t.Fatalf("the AM did not reach its crash point (checkpoint %d completed) within 3 minutes (logs in %s)", crashAt, c.LogDir())
	}
	killed := time.Now()
	completed := completedOnDisk(t, ckpt, jid)
	if len(completed) == 0 || completed[len(completed)-1] < crashAt {
		t.Fatalf("complete checkpoints on disk %v; want the AM to have died after checkpoint %d completed", completed, crashAt)
	}
	crashed := completed[len(completed)-1]
	// The --timestamps sink writes all along (the --output sink only at the end of input).
	pending := hiddenWithSuffix(t, stamps, ".pending")
	if len(pending) == 0 {
		t.Fatalf("no pre-committed (.pending) file in %s right after the AM died between completing checkpoint %d and telling the sinks: the crash point missed the window", stamps, crashed)
	}
	t.Logf("the AM died after completing checkpoint %d, before notifying it: %d sink files pending in %s", crashed, len(pending), stamps)

	time.Sleep(amAbsence) // the job runs without an AM meanwhile
	am2 := r.Start(t, 2)
	after := waitRunningAt(t, c, jid, 2)
	back := time.Now()
	if after.Attempt != d.Attempt || after.RestoreFrom != 0 {
		t.Fatalf("AM 2: attempt %d restored from checkpoint %d; want attempt %d adopted, nothing restored (logs in %s)", after.Attempt, after.RestoreFrom, d.Attempt, c.LogDir())
	}
	testkit.WaitFor(t, "the files pending at the crash committed", func() (bool, error) {
		for _, p := range pending {
			final := "part-" + strings.TrimSuffix(strings.TrimPrefix(p, "."), ".pending")
			if _, err := os.Stat(filepath.Join(stamps, final)); err != nil {
				return false, fmt.Errorf("%s not committed as %s", p, final)
			}
		}
		return true, nil
	})
	testkit.WaitFor(t, fmt.Sprintf("a checkpoint above %d under AM 2", crashed), func() (bool, error) {
		return latestCompleted(t, c, jid) > crashed, nil
	})
	checkpointed := time.Now()
	am2.Wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	checkFlowedThrough(t, stamps, records, []amAbsent{{killed: killed, back: back, checkpointed: checkpointed}})
	log, err := os.ReadFile(filepath.Join(c.LogDir(), "jobmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "crash point reached") {
		t.Errorf("the first AM's log does not say it reached its crash point")
	}
}

// A checkpoint in flight when the AM dies is aborted cleanly. CheckableCount carries 56 MB
// of keyed --ballast so uploading a checkpoint takes a while; once checkpoint P has a
// half-written state file (the storage's temporary name) in chk-P, both TaskManagers are
// frozen (SIGSTOP: nothing can finish or acknowledge P any more), the AM is SIGKILLed and
// the TaskManagers thawed. The new AM adopts the subtasks, never counts P as complete (no
// _metadata, not completed in its history), its next checkpoint id is above P, P's
// directory is deleted once every subtask acknowledged a later checkpoint, and the output
// is exact.
func TestAMFailoverAbortsCheckpointInFlight(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	dyn := adoptingReactive(ckpt)
	args := []string{"--records", "40000", "--keys", "7", "--rate", "2000", "--ballast", strconv.Itoa(8 << 20), "--output", out}
	c, r := startAMRestartCluster(t, dyn, examples.CheckableCountName, args, 2)
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	waitCheckpointIn(t, c, jid, d.Attempt)

	tms := []string{"tm-1", "tm-2"}
	signal := func(sig syscall.Signal) {
		for _, tm := range tms {
			if err := c.Signal(tm, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitDeploymentRecordedIn(t, ckpt, jid, d.Attempt)
	var inFlight int64
	var halfWritten []string
	testkit.WaitFor(t, "a checkpoint frozen with a half-written state file", func() (bool, error) {
		id, partial := uploading(t, ckpt, jid)
		if len(partial) == 0 {
			return false, fmt.Errorf("no checkpoint uploading")
		}
		signal(syscall.SIGSTOP)
		// Frozen, no TaskManager can finish an upload: a temporary file still there now
		// belongs to a subtask that never acknowledged checkpoint id.
		if id2, partial := uploading(t, ckpt, jid); id2 == id && len(partial) > 0 {
			inFlight, halfWritten = id, partial
			return true, nil
		}
		signal(syscall.SIGCONT)
		return false, fmt.Errorf("checkpoint %d finished its uploads before the TaskManagers froze", id)
	})
	r.Kill(t)
	signal(syscall.SIGCONT)
	chk := filepath.Join(ckpt, jid, "chk-"+strconv.FormatInt(inFlight, 10))
	if _, err := os.Stat(filepath.Join(chk, "_metadata")); err == nil {
		t.Fatalf("checkpoint %d has _metadata though its upload %v never finished", inFlight, halfWritten)
	}
	before := completedOnDisk(t, ckpt, jid)
	t.Logf("killed the AM during checkpoint %d (complete on disk: %v), half-written: %v", inFlight, before, halfWritten)

	am2 := r.Start(t, 2)
	after := waitRunningAt(t, c, jid, 2)
	if after.Attempt != d.Attempt || after.RestoreFrom != 0 {
		t.Fatalf("AM 2: attempt %d restored from checkpoint %d; want attempt %d adopted (logs in %s)", after.Attempt, after.RestoreFrom, d.Attempt, c.LogDir())
	}
	var first int64
	testkit.WaitFor(t, "a checkpoint completed by AM 2", func() (bool, error) {
		first = latestCompleted(t, c, jid)
		return first > before[len(before)-1], nil
	})
	if first <= inFlight {
		t.Fatalf("AM 2's first completed checkpoint is %d; want an id above the aborted %d", first, inFlight)
	}
	var s testkit.CheckpointStats
	if err := rest(c, "/jobs/"+jid+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	for _, h := range s.History {
		if h.ID == inFlight && h.Status == "COMPLETED" {
			t.Fatalf("AM 2's checkpoint history counts the aborted checkpoint %d as completed", inFlight)
		}
	}
	testkit.WaitFor(t, fmt.Sprintf("the aborted checkpoint's directory %s deleted", chk), func() (bool, error) {
		_, err := os.Stat(chk)
		return os.IsNotExist(err), err
	})
	am2.Wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	if !am2.Logged(t, "aborting the checkpoint the lost AM left in flight") {
		t.Errorf("AM 2 did not log aborting checkpoint %d (log %s)", inFlight, am2.Log)
	}
}

// uploading returns the newest checkpoint directory of the job without _metadata and the
// half-written files in it (the storage's temporary names).
func uploading(t *testing.T, ckpt, jid string) (int64, []string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ckpt, jid))
	if err != nil {
		t.Fatal(err)
	}
	var newest int64
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "chk-")
		if id, err := strconv.ParseInt(n, 10, 64); ok && err == nil && id > newest {
			newest = id
		}
	}
	dir := filepath.Join(ckpt, jid, "chk-"+strconv.FormatInt(newest, 10))
	if _, err := os.Stat(filepath.Join(dir, "_metadata")); newest == 0 || err == nil {
		return newest, nil
	}
	files, _ := os.ReadDir(dir)
	var partial []string
	for _, f := range files {
		if strings.HasPrefix(f.Name(), ".tide-tmp.") {
			partial = append(partial, f.Name())
		}
	}
	return newest, partial
}

// completedOnDisk lists the ids of the job's checkpoints with _metadata, ascending (none
// once a finished job's directory is gone).
func completedOnDisk(t *testing.T, ckpt, jid string) []int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ckpt, jid))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "chk-")
		id, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(ckpt, jid, e.Name(), "_metadata")); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// hiddenWithSuffix lists the hidden files in dir whose names end in suffix.
func hiddenWithSuffix(t *testing.T, dir, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	return out
}
