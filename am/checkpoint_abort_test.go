package am_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/storage"
)

// A checkpoint fails (one subtask declines) while another subtask of it is still writing
// its state: the AM deletes the checkpoint's directory only once that writer has reported
// back, so nothing is left behind. Before, the AM deleted at once and the late state file
// brought chk-<n> back for good. The TaskManager is scripted over the real RPC so the test
// decides when it writes.
func TestFailedCheckpointDeletedAfterItsWritersStop(t *testing.T) {
	dir := t.TempDir()
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "100000000", "--output", t.TempDir()}, ckptDir: dir, interval: 100 * time.Millisecond})
	stream, done := dial(t, c.am.RPCAddr(), &rpc.Register{TaskManagerId: "tm-script", NodeId: "n", Slots: 1,
		BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"})
	defer done()
	st, err := storage.Open(context.Background(), "file://"+dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var deploy *rpc.DeployTasks
	var trigger *rpc.TriggerCheckpoint
	for trigger == nil {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case msg.GetDeploy() != nil:
			deploy = msg.GetDeploy()
			for _, s := range deploy.GetSubtasks() {
				send(t, stream, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
					Attempt: deploy.GetAttempt(), Vertex: s.GetVertex(), Index: s.GetIndex(), State: string(core.TaskRunning)}}})
			}
		case msg.GetTriggerCheckpoint() != nil:
			trigger = msg.GetTriggerCheckpoint()
		}
	}
	subs := deploy.GetSubtasks()
	if len(subs) != 2 {
		t.Fatalf("deployed %v, want two subtasks in the one slot", subs)
	}
	id := trigger.GetCheckpointId()
	chk := filepath.Join(dir, jobID, fmt.Sprintf("chk-%d", id))
	writer, late := subs[0], subs[1]

	// One subtask declines: the checkpoint fails while the other is still writing.
	send(t, stream, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_CheckpointDecline{CheckpointDecline: &rpc.CheckpointDecline{
		Attempt: deploy.GetAttempt(), CheckpointId: id, Vertex: writer.GetVertex(), Index: writer.GetIndex(), Reason: "disk full"}}})
	testkit.WaitFor(t, "checkpoint failed", func() (bool, error) {
		var s testkit.CheckpointStats
		err := c.getJSON("/jobs/"+jobID+"/checkpoints", &s)
		return s.Latest.Failed != nil && s.Latest.Failed.ID == id, err
	})
	// Give an eager delete its chance to run before the late write (it must not).
	time.Sleep(500 * time.Millisecond)
	name := fmt.Sprintf("%s/chk-%d/%s-%d.state", jobID, id, late.GetVertex(), late.GetIndex())
	if err := storage.WriteFile(context.Background(), st, name, []byte("state written at the abort")); err != nil {
		t.Fatal(err)
	}
	send(t, stream, &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_CheckpointAck{CheckpointAck: &rpc.CheckpointAck{
		Attempt: deploy.GetAttempt(), CheckpointId: id, Vertex: late.GetVertex(), Index: late.GetIndex(),
		Handles: []*rpc.StateHandle{{Name: name, Size: 26}}}}})

	testkit.WaitFor(t, "the failed checkpoint's directory deleted", func() (bool, error) {
		_, err := os.Stat(chk)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, err
	})
}

func send(t *testing.T, stream rpc.JobManager_ConnectClient, msg *rpc.TaskManagerMessage) {
	t.Helper()
	if err := stream.Send(msg); err != nil {
		t.Fatal(err)
	}
}
