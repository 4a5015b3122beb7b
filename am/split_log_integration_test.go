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
