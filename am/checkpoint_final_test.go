package am_test

import (
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/rpc"
)

// Once every source subtask reports the end of its input, the AM triggers the final
// checkpoint at once instead of at the next interval (an hour here: any trigger the test
// sees comes from the end of input). Reports of a subtask that is not a source's and of
// another attempt come first: the AM skips them, and still triggers on the source's.
func TestFinalCheckpointTriggeredWhenSourcesEnd(t *testing.T) {
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "100000000", "--output", t.TempDir()}, ckptDir: t.TempDir(), interval: time.Hour, noCheckpointConf: true})
	stream, done := dial(t, c.am.RPCAddr(), &rpc.Register{TaskManagerId: "tm-script", NodeId: "n", Slots: 1,
		BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"})
	defer done()

	var deploy *rpc.DeployTasks
	for deploy == nil {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		deploy = msg.GetDeploy()
	}
	ended := func(attempt int64, s *rpc.Subtask) {
		send(t, stream, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_InputEnded{InputEnded: &rpc.PerfInputEnded{
			Attempt: attempt, Vertex: s.GetVertex(), Index: s.GetIndex()}}})
	}
	var source *rpc.Subtask
	for _, s := range deploy.GetSubtasks() {
		send(t, stream, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
			Attempt: deploy.GetAttempt(), Vertex: s.GetVertex(), Index: s.GetIndex(), State: string(core.TaskRunning)}}})
		if s.GetVertex() == "numbers" {
			source = s
		} else {
			ended(deploy.GetAttempt(), s) // not a source: ignored
		}
	}
	if source == nil {
		t.Fatalf("deployed %v, want the numbers source among them", deploy.GetSubtasks())
	}
	ended(deploy.GetAttempt()+1, source) // another attempt: ignored
	ended(deploy.GetAttempt(), source)
	for {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if tc := msg.GetTriggerCheckpoint(); tc != nil {
			if tc.GetAttempt() != deploy.GetAttempt() {
				t.Fatalf("checkpoint triggered for attempt %d, want %d", tc.GetAttempt(), deploy.GetAttempt())
			}
			return
		}
	}
}
