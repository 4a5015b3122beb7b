package am_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// dial opens a raw Connect stream and sends reg.
func dial(t *testing.T, addr string, reg *rpc.Register) (rpc.JobManager_ConnectClient, func()) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	stream, err := rpc.NewJobManagerClient(cc).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_Register{Register: reg}}); err != nil {
		t.Fatal(err)
	}
	return stream, func() { cancel(); cc.Close() }
}

func TestRegistration(t *testing.T) {
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "10", "--output", t.TempDir()}, ckptDir: t.TempDir(), interval: time.Second})
	tests := []struct {
		name       string
		reg        *rpc.Register
		wantReason string // "" = accepted
	}{
		{"other build", &rpc.Register{TaskManagerId: "tm-x", NodeId: "n", Slots: 1, BuildId: "not-this-build"}, "different build"},
		{"no slots", &rpc.Register{TaskManagerId: "tm-y", NodeId: "n", Slots: 0, BuildId: rpc.BuildID()}, "at least one slot"},
		{"no id", &rpc.Register{NodeId: "n", Slots: 1, BuildId: rpc.BuildID()}, "non-empty id"},
		{"accepted", &rpc.Register{TaskManagerId: "tm-ok", NodeId: "n", Slots: 1, BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, done := dial(t, c.am.RPCAddr(), tt.reg)
			defer done()
			msg, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantReason == "" {
				if r := msg.GetRegistered(); r == nil || r.GetJobName() != examples.CheckableCountName || r.GetJobId() != jobID {
					t.Fatalf("got %v, want Registered for job %s", msg, examples.CheckableCountName)
				}
				return
			}
			rej := msg.GetRejected()
			if rej == nil || !strings.Contains(rej.GetReason(), tt.wantReason) {
				t.Fatalf("got %v, want Rejected mentioning %q", msg, tt.wantReason)
			}
			if _, err := stream.Recv(); err == nil {
				t.Fatal("stream still open after Rejected")
			}
		})
	}
}

func TestDuplicateTaskManagerIDRefused(t *testing.T) {
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "10", "--output", t.TempDir()}, ckptDir: t.TempDir(), interval: time.Second})
	reg := &rpc.Register{TaskManagerId: "tm-dup", NodeId: "n", Slots: 1, BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"}
	first, done1 := dial(t, c.am.RPCAddr(), reg)
	defer done1()
	if m, err := first.Recv(); err != nil || m.GetRegistered() == nil {
		t.Fatalf("first registration: %v %v", m, err)
	}
	second, done2 := dial(t, c.am.RPCAddr(), reg)
	defer done2()
	m, err := second.Recv()
	if err != nil || m.GetRejected() == nil || !strings.Contains(m.GetRejected().GetReason(), "already registered") {
		t.Fatalf("second registration with the same id: %v %v, want Rejected", m, err)
	}
}

// TestLostConnectionIsTaskManagerLoss: the AM forgets a TaskManager the moment its
// stream ends, without waiting for a heartbeat timeout.
func TestLostConnectionIsTaskManagerLoss(t *testing.T) {
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "10", "--output", t.TempDir()}, ckptDir: t.TempDir(), interval: time.Second,
		dynamic: []string{"heartbeat.timeout=1 h"}})
	reg := &rpc.Register{TaskManagerId: "tm-gone", NodeId: "n", Slots: 1, BuildId: rpc.BuildID(), DataAddress: "127.0.0.1:1"}
	stream, done := dial(t, c.am.RPCAddr(), reg)
	if m, err := stream.Recv(); err != nil || m.GetRegistered() == nil {
		t.Fatalf("registration: %v %v", m, err)
	}
	count := func() (int, error) {
		var body struct {
			TaskManagers []struct{ ID string } `json:"taskmanagers"`
		}
		err := c.getJSON("/taskmanagers", &body)
		return len(body.TaskManagers), err
	}
	testkit.WaitFor(t, "TaskManager listed", func() (bool, error) { n, err := count(); return n == 1, err })
	done()
	testkit.WaitFor(t, "TaskManager gone", func() (bool, error) { n, err := count(); return n == 0, err })
}
