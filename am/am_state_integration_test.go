package am_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
)

// A blocklist change over REST is answered only once it is persisted beside the
// checkpoints: while the storage stalls the answer waits, and the file holds the node
// with its absolute end once it comes.
func TestBlocklistAddAnswersOnceDurable(t *testing.T) {
	dir := t.TempDir()
	var stall *testkit.StallStorage
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "10", "--output", t.TempDir()}, ckptDir: dir, interval: time.Second,
		wrap: func(st storage.Storage) storage.Storage { stall = testkit.NewStallStorage(st); return stall }})
	stateFile := filepath.Join(dir, jobID, "_am_state")
	testkit.WaitFor(t, "the AM state written at start", func() (bool, error) { return stall.Commits("_am_state") > 0, nil })

	stall.Stall("_am_state")
	end := time.Now().Add(30 * time.Minute).UnixMilli()
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		status, _, body, err := testkit.Send(context.Background(), http.MethodPut, "http://"+c.am.RESTAddr()+"/blocklist/nodes/node-bad",
			fmt.Sprintf(`{"action":"MARK_BLOCKED","endTimestamp":"%d","cause":"bad disk"}`, end))
		answered <- answer{status, body, err}
	}()
	testkit.WaitFor(t, "the blocklist write stalled", func() (bool, error) { return stall.Blocked() > 0, nil })
	select {
	case a := <-answered:
		t.Fatalf("PUT /blocklist answered %d %s before the blocklist was persisted", a.status, a.body)
	default:
	}
	stall.Release()
	a := <-answered
	if a.err != nil || a.status != http.StatusCreated {
		t.Fatalf("PUT /blocklist = %d %s %v, want 201", a.status, a.body, a.err)
	}
	var st struct {
		Blocklist []struct {
			ID  string
			End time.Time
		} `json:"blocklist"`
	}
	data, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Blocklist) != 1 || st.Blocklist[0].ID != "node-bad" || st.Blocklist[0].End.UnixMilli() != end {
		t.Fatalf("persisted blocklist %+v, want node-bad ending at %d", st.Blocklist, end)
	}
}

// amStateREST is what the tests compare across AM attempts.
type amStateREST struct {
	StartTime   int64
	Blocklist   map[string]struct{ EndTimestamp, StartTimestamp int64 }
	RescaleIDs  []int
	Exceptions  []int64 // timestamps
	Checkpoints testkit.CheckpointStats
}

func readAMState(t *testing.T, get func(string, any) error) amStateREST {
	t.Helper()
	var s amStateREST
	var job struct {
		StartTime int64 `json:"start-time"`
	}
	var blocked map[string]struct {
		StartTimestamp int64 `json:"startTimestamp,string"`
		EndTimestamp   int64 `json:"endTimestamp,string"`
	}
	var rescales struct {
		Rescales []struct {
			ID int `json:"id"`
		} `json:"rescales"`
	}
	var exc struct {
		ExceptionHistory struct {
			Entries []struct {
				Timestamp int64 `json:"timestamp"`
			} `json:"entries"`
		} `json:"exceptionHistory"`
	}
	for path, v := range map[string]any{"/jobs/" + jobID: &job, "/blocklist": &blocked, "/jobs/" + jobID + "/rescales": &rescales,
		"/jobs/" + jobID + "/exceptions": &exc, "/jobs/" + jobID + "/checkpoints": &s.Checkpoints} {
		if err := get(path, v); err != nil {
			t.Fatal(err)
		}
	}
	s.StartTime = job.StartTime
	s.Blocklist = map[string]struct{ EndTimestamp, StartTimestamp int64 }{}
	for id, b := range blocked {
		s.Blocklist[id] = struct{ EndTimestamp, StartTimestamp int64 }{b.EndTimestamp, b.StartTimestamp}
	}
	for _, r := range rescales.Rescales {
		s.RescaleIDs = append(s.RescaleIDs, r.ID)
	}
	for _, e := range exc.ExceptionHistory.Entries {
		s.Exceptions = append(s.Exceptions, e.Timestamp)
	}
	return s
}

// The next AM attempt on the same checkpoint directory shows the blocklist (with its
// absolute end), the rescale and exception histories, the checkpoint counters and the
// start time of the one before.
func TestAMStateSurvivesAMRestart(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	o := clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "100000000", "--keys", "5", "--rate", "2000", "--output", out}, ckptDir: dir, interval: 100 * time.Millisecond}
	c := startCluster(t, o)
	c.addTM("tm-a", 1)
	c.addTM("tm-b", 1)
	c.waitRunningAt(t, 2)
	end := time.Now().Add(30 * time.Minute).UnixMilli()
	status, _, body, err := testkit.Send(context.Background(), http.MethodPut, "http://"+c.am.RESTAddr()+"/blocklist/nodes/node-elsewhere",
		fmt.Sprintf(`{"action":"MARK_BLOCKED","endTimestamp":"%d","cause":"operator: bad disk"}`, end))
	if err != nil || status != http.StatusCreated {
		t.Fatalf("PUT /blocklist = %d %s %v", status, body, err)
	}
	c.stopTM("tm-b")
	c.waitRunningAt(t, 1)
	var before amStateREST
	testkit.WaitFor(t, "a rescale, an exception and two checkpoints after it", func() (bool, error) {
		before = readAMState(t, c.getJSON)
		return len(before.RescaleIDs) >= 2 && len(before.Exceptions) >= 1 && before.Checkpoints.Counts.Completed >= 4, nil
	})
	c.stopTM("tm-a")
	c.stop()

	c2 := startCluster(t, o)
	c2.addTM("tm-c", 1)
	c2.waitRunningAt(t, 1)
	after := readAMState(t, c2.getJSON)
	if after.StartTime != before.StartTime {
		t.Errorf("start time %d, want %d of the first attempt", after.StartTime, before.StartTime)
	}
	b, ok := after.Blocklist["node-elsewhere"]
	if !ok || b.EndTimestamp != end || b != before.Blocklist["node-elsewhere"] {
		t.Errorf("blocklist %+v, want node-elsewhere ending at %d as before (%+v)", after.Blocklist, end, before.Blocklist)
	}
	for _, id := range before.RescaleIDs {
		if !slices.Contains(after.RescaleIDs, id) {
			t.Errorf("rescale %d of the first attempt missing: %v", id, after.RescaleIDs)
		}
	}
	if slices.Max(after.RescaleIDs) <= slices.Max(before.RescaleIDs) {
		t.Errorf("rescale ids %v: the new attempt's initial schedule should follow %v", after.RescaleIDs, before.RescaleIDs)
	}
	for _, ts := range before.Exceptions {
		if !slices.Contains(after.Exceptions, ts) {
			t.Errorf("exception at %d of the first attempt missing: %v", ts, after.Exceptions)
		}
	}
	if got, was := after.Checkpoints.Counts, before.Checkpoints.Counts; got.Completed < was.Completed || got.Restored < 1 {
		t.Errorf("checkpoint counts %+v, want completed ≥ %d and a restore", got, was.Completed)
	}
}
