package yarn

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers/drivertest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDriverLogsAMOnBlockedNode: an AM attempt YARN placed on a node the restored blocklist
// blocks says so (YARN gives an application no way to keep its next attempt off a node);
// one on an unblocked node says nothing.
func TestDriverLogsAMOnBlockedNode(t *testing.T) {
	for _, tc := range []struct {
		amNode string
		want   bool
	}{{"bad-node:8041", true}, {"good-node:8041", false}} {
		var logs syncBuffer
		f := newFakeRM()
		d, err := NewDriver(DriverConfig{
			Scheduler: f, Containers: fakeNM{f}, Nodes: fakeNodes{"bad-node:8041", "good-node:8041"},
			Host: "am-host", RPCPort: 6123, TrackingURL: "http://am-host:8081",
			MemoryMB: 256, VCores: 1, Launch: fakeLaunch, NodeIDs: NodeIDHost, AMNode: tc.amNode,
			Heartbeat: time.Hour, FastHeartbeat: 5 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		startFake(t, d, drivertest.NewRecorder(), func(n core.NodeID) bool { return n == "bad-node" })
		got := strings.Contains(logs.String(), "this AM attempt runs on a blocked node")
		if got != tc.want {
			t.Errorf("AM on %s: warned %v, want %v; log:\n%s", tc.amNode, got, tc.want, logs.String())
		}
	}
}
