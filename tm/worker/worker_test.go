package worker

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/rpc"
)

// fakeAM answers every Register with reply and records what the TaskManager sends.
type fakeAM struct {
	rpc.UnimplementedJobManagerServer
	reply func(*rpc.Register) *rpc.JobManagerMessage
	got   chan *rpc.TaskManagerMessage
}

func (f *fakeAM) Connect(stream rpc.JobManager_ConnectServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	f.got <- first
	if err := stream.Send(f.reply(first.GetRegister())); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return nil
		}
		f.got <- m
	}
}

func startFakeAM(t *testing.T, reply func(*rpc.Register) *rpc.JobManagerMessage) (*fakeAM, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAM{reply: reply, got: make(chan *rpc.TaskManagerMessage, 64)}
	srv := grpc.NewServer()
	rpc.RegisterJobManagerServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f, ln.Addr().String()
}

// startStoppableAM is startFakeAM that the test can stop early (the AM dies).
func startStoppableAM(t *testing.T, reply func(*rpc.Register) *rpc.JobManagerMessage) (*fakeAM, string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAM{reply: reply, got: make(chan *rpc.TaskManagerMessage, 1024)}
	srv := grpc.NewServer()
	rpc.RegisterJobManagerServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f, ln.Addr().String(), srv.Stop
}

func testConfig(addr string) Config {
	return Config{AMAddress: addr, ID: "tm-1", NodeID: "node-1", Slots: 2, ConnectTimeout: 2 * time.Second,
		InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
}

func TestRejectedExits(t *testing.T) {
	f, addr := startFakeAM(t, func(*rpc.Register) *rpc.JobManagerMessage {
		return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Rejected{Rejected: &rpc.Rejected{Reason: "node is blocked"}}}
	})
	err := Run(context.Background(), testConfig(addr))
	if !errors.Is(err, ErrRejected) {
		t.Fatalf("Run = %v, want ErrRejected", err)
	}
	reg := (<-f.got).GetRegister()
	if reg.GetTaskManagerId() != "tm-1" || reg.GetNodeId() != "node-1" || reg.GetSlots() != 2 || reg.GetBuildId() != rpc.BuildID() || reg.GetDataAddress() == "" {
		t.Fatalf("Register = %v", reg)
	}
}

func TestUnreachableAMGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(addr)
	cfg.ConnectTimeout = 200 * time.Millisecond
	err = Run(context.Background(), cfg)
	if !errors.Is(err, ErrAMUnreachable) {
		t.Fatalf("Run = %v, want ErrAMUnreachable", err)
	}
}

func TestUnknownJobExits(t *testing.T) {
	_, addr := startFakeAM(t, func(*rpc.Register) *rpc.JobManagerMessage {
		return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Registered{Registered: &rpc.Registered{JobId: "j", JobName: "NotInThisBinary"}}}
	})
	if err := Run(context.Background(), testConfig(addr)); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("Run = %v, want ErrUnknownJob", err)
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"no AM", func(c *Config) { c.AMAddress = "" }},
		{"no id", func(c *Config) { c.ID = "" }},
		{"no node", func(c *Config) { c.NodeID = "" }},
		{"no slots", func(c *Config) { c.Slots = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig("127.0.0.1:1")
			tt.edit(&cfg)
			if err := Run(context.Background(), cfg); err == nil {
				t.Fatal("Run accepted an invalid configuration")
			}
		})
	}
}

// TestStopUnregisters: a registered TaskManager heartbeats, and on SIGTERM (ctx ends)
// tells the AM it leaves and exits cleanly.
func TestStopUnregisters(t *testing.T) {
	out, ckpt := t.TempDir(), t.TempDir()
	f, addr := startFakeAM(t, func(*rpc.Register) *rpc.JobManagerMessage {
		return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Registered{Registered: &rpc.Registered{
			JobId: "0123456789abcdef0123456789abcdef", JobName: examples.CheckableCountName,
			JobArgs: []string{"--records", "10", "--output", out}, HeartbeatIntervalMillis: 20,
			Config: map[string]string{"state.checkpoints.dir": "file://" + ckpt}}}}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, testConfig(addr)) }()
	<-f.got // Register
	deadline := time.After(30 * time.Second)
	for seenHeartbeat := false; !seenHeartbeat; {
		select {
		case m := <-f.got:
			seenHeartbeat = m.GetHeartbeat() != nil
		case <-deadline:
			t.Fatal("no heartbeat")
		}
	}
	cancel()
	for {
		select {
		case m := <-f.got:
			if m.GetUnregister() == nil {
				continue
			}
			if err := <-done; err != nil {
				t.Fatalf("Run after stop = %v, want nil", err)
			}
			return
		case <-deadline:
			t.Fatal("no Unregister after stop")
		}
	}
}
