package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/stream"
)

// AddSplitsBack: the TaskManager of a source reader that got splits after the last
// completed checkpoint is SIGKILLed. The job goes on on the other TaskManager (a reactive
// rescale, a restore from that checkpoint): the splits the dead reader got since go back
// to the enumerator and are read again from the checkpointed position by the next reader
// that asks, never by two readers. The committed output is exact: no split read twice,
// none lost (the counts, and number by number the --timestamps output).
func TestReaderTaskManagerKilledAfterNewSplits(t *testing.T) {
	ckpt, out, stamps := t.TempDir(), t.TempDir(), t.TempDir()
	const records = 120000
	args := stampedCountArgs(records, out, stamps)
	c := startLocal(t, standalone.LocalOptions{Dynamic: reactive(ckpt, "300 ms"), JobName: examples.CheckableCountName,
		JobArgs: args, TaskManagers: 2})
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	waitCheckpointIn(t, c, jid, d.Attempt)

	vertex := sourceVertex(t, args)
	logName := filepath.Join(ckpt, jid, "splits", url.QueryEscape(vertex)+".log")
	victim := readerWithNewSplits(t, func() ([]byte, error) { return os.ReadFile(logName) })
	tm := subtaskTaskManager(t, restOf(c), jid, vertex, victim)
	if err := c.Signal(tm, syscall.SIGKILL); err != nil {
		t.Fatalf("reader %d runs on %q: %v", victim, tm, err)
	}
	t.Logf("killed %s, which runs reader %d with splits assigned since the last completed checkpoint", tm, victim)
	waitExact(t, c, 4*time.Minute, out, args)
	// Number by number: every 100th number of every split committed exactly once.
	st, err := examples.ReadCommittedTimestamps(stamps)
	if err != nil {
		t.Fatal(err)
	}
	if err := examples.CheckTimestamps(st, records); err != nil {
		t.Fatal(err)
	}
}

// sourceVertex is the source vertex of CheckableCount run with args.
func sourceVertex(t *testing.T, args []string) string {
	t.Helper()
	build, _ := stream.Lookup(examples.CheckableCountName)
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	return job.Sources()[0].Vertex
}

// readerWithNewSplits waits until the split-assignment log (read by read) shows a reader
// that was given splits since the last completed checkpoint, and returns its subtask.
func readerWithNewSplits(t *testing.T, read func() ([]byte, error)) int {
	t.Helper()
	victim := -1
	testkit.WaitFor(t, "a reader with splits assigned since the last completed checkpoint", func() (bool, error) {
		data, err := read()
		if err != nil {
			return false, err
		}
		entries, _, err := source.DecodeLog(data)
		if err != nil {
			return false, err
		}
		tr, err := source.Replay(entries)
		if err != nil {
			return false, err
		}
		if tr.LastCompleted() <= 0 {
			return false, nil
		}
		for _, a := range tr.Uncheckpointed() {
			if len(a.Splits) > 0 {
				victim = a.Subtask
				return true, nil
			}
		}
		return false, nil
	})
	return victim
}

// subtaskTaskManager waits until subtask index of vertex runs and returns its TaskManager
// (REST).
func subtaskTaskManager(t *testing.T, get testkit.Getter, jid, vertex string, index int) string {
	t.Helper()
	tm := ""
	testkit.WaitFor(t, fmt.Sprintf("subtask %d of %s running on a TaskManager", index, vertex), func() (bool, error) {
		var v api.VertexDetails
		if err := get("/jobs/"+jid+"/vertices/"+url.PathEscape(vertex), &v); err != nil {
			return false, err
		}
		for _, s := range v.Subtasks {
			if s.Subtask == index && s.Status == "RUNNING" && s.TaskManagerID != "" {
				tm = s.TaskManagerID
				return true, nil
			}
		}
		return false, fmt.Errorf("subtasks %+v", v.Subtasks)
	})
	return tm
}
