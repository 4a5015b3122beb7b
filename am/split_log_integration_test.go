package am_test

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/stream"
)

func readSplitLogFile(t *testing.T, name string) []source.Entry {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	entries, truncated, err := source.DecodeLog(data)
	if err != nil || truncated {
		t.Fatalf("split log %s: truncated %v, err %v", name, truncated, err)
	}
	return entries
}

// A reader's split assignment reaches the TaskManager only once the log in the
// checkpoint directory holds it: the scripted TaskManager reads the log file the moment
// the assignment arrives.
func TestSplitAssignmentLoggedBeforeTheReaderGetsIt(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--records", "1000", "--output", t.TempDir()}
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: dir, interval: 50 * time.Second})
	conn, done := dial(t, c.am.RPCAddr(), &rpc.Register{TaskManagerId: "tm-script", NodeId: "n", Slots: 1,
		BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"})
	defer done()
	var deploy *rpc.DeployTasks
	for deploy == nil {
		msg, err := conn.Recv()
		if err != nil {
			t.Fatal(err)
		}
		deploy = msg.GetDeploy()
	}
	var src string
	for _, s := range deploy.GetSubtasks() {
		send(t, conn, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
			Attempt: deploy.GetAttempt(), Vertex: s.GetVertex(), Index: s.GetIndex(), State: string(core.TaskRunning)}}})
	}
	build, _ := stream.Lookup(examples.CheckableCountName)
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range job.Sources() {
		src = s.Vertex
	}
	var got []string
	for range 2 {
		send(t, conn, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_SplitRequest{SplitRequest: &rpc.SplitRequest{
			Attempt: deploy.GetAttempt(), Vertex: src, Index: 0}}})
		var sa *rpc.SplitAssignment
		for sa == nil {
			msg, err := conn.Recv()
			if err != nil {
				t.Fatal(err)
			}
			sa = msg.GetSplitAssignment()
		}
		if len(sa.GetSplits()) != 1 {
			t.Fatalf("assignment %v: want one split", sa)
		}
		id := sa.GetSplits()[0].GetId()
		got = append(got, id)
		// Now, before anything else: the log must already hold it.
		var logged []string
		var registered bool
		for _, e := range readSplitLogFile(t, filepath.Join(dir, jobID, "splits", url.QueryEscape(src)+".log")) {
			switch e.Kind {
			case source.KindRegister:
				registered = registered || (e.Subtask == 0 && e.Attempt == deploy.GetAttempt())
			case source.KindAssign:
				for _, a := range e.Assignments {
					for _, s := range a.Splits {
						if a.Subtask == 0 {
							logged = append(logged, s.ID)
						}
					}
				}
			}
		}
		if !registered || !slices.Equal(logged, got) {
			t.Fatalf("reader got %v; log on disk: registered %v, assigned %v", got, registered, logged)
		}
	}
}

// A split assignment the log cannot take (the checkpoint storage unreachable) is not a
// job failure: the reader waits, the write is retried, and once the storage is back the
// reader gets its split, logged first, in the same attempt.
func TestSplitAssignmentWaitsForTheLogWhileStorageIsDown(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--records", "1000", "--output", t.TempDir()}
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: dir, interval: 50 * time.Second})
	conn, done := dial(t, c.am.RPCAddr(), &rpc.Register{TaskManagerId: "tm-script", NodeId: "n", Slots: 1,
		BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"})
	defer done()
	msgs := make(chan *rpc.JobManagerMessage, 64)
	go func() {
		defer close(msgs)
		for {
			msg, err := conn.Recv()
			if err != nil {
				return
			}
			msgs <- msg
		}
	}()
	next := func(what string, wait time.Duration, match func(*rpc.JobManagerMessage) bool) *rpc.JobManagerMessage {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case msg, ok := <-msgs:
				if !ok {
					t.Fatalf("waiting for %s: the AM closed the stream", what)
				}
				if msg.GetCancel() != nil {
					t.Fatalf("waiting for %s: the AM cancelled the attempt: %v", what, msg.GetCancel())
				}
				if match(msg) {
					return msg
				}
			case <-deadline:
				return nil
			}
		}
	}
	deploy := next("the deployment", time.Minute, func(m *rpc.JobManagerMessage) bool { return m.GetDeploy() != nil }).GetDeploy()
	if deploy == nil {
		t.Fatal("no deployment within a minute")
	}
	for _, s := range deploy.GetSubtasks() {
		send(t, conn, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
			Attempt: deploy.GetAttempt(), Vertex: s.GetVertex(), Index: s.GetIndex(), State: string(core.TaskRunning)}}})
	}
	build, _ := stream.Lookup(examples.CheckableCountName)
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	var src string
	for _, s := range job.Sources() {
		src = s.Vertex
	}
	// The storage "goes away": the log's directory becomes a plain file.
	splits := filepath.Join(dir, jobID, "splits")
	if err := os.RemoveAll(splits); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(splits, []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	send(t, conn, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_SplitRequest{SplitRequest: &rpc.SplitRequest{
		Attempt: deploy.GetAttempt(), Vertex: src, Index: 0}}})
	isAssignment := func(m *rpc.JobManagerMessage) bool { return m.GetSplitAssignment() != nil }
	if m := next("no assignment while the log cannot be written", 2*time.Second, isAssignment); m != nil {
		t.Fatalf("the reader got %v although the log could not hold it", m.GetSplitAssignment())
	}
	if err := os.Remove(splits); err != nil {
		t.Fatal(err)
	}
	m := next("the assignment once the log is writable again", time.Minute, isAssignment)
	if m == nil {
		t.Fatal("no split assignment within a minute of the storage coming back")
	}
	sa := m.GetSplitAssignment()
	if sa.GetAttempt() != deploy.GetAttempt() || len(sa.GetSplits()) != 1 {
		t.Fatalf("assignment %v: want one split in attempt %d", sa, deploy.GetAttempt())
	}
	var logged []string
	for _, e := range readSplitLogFile(t, filepath.Join(splits, url.QueryEscape(src)+".log")) {
		for _, a := range e.Assignments {
			for _, s := range a.Splits {
				if a.Subtask == 0 {
					logged = append(logged, s.ID)
				}
			}
		}
	}
	if !slices.Equal(logged, []string{sa.GetSplits()[0].GetId()}) {
		t.Fatalf("reader got %s; the log holds %v", sa.GetSplits()[0].GetId(), logged)
	}
}
