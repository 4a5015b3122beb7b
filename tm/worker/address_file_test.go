package worker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/rpc"
)

// publish atomically replaces the address file at path with addr.
func publish(t *testing.T, path, addr string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// awaitRegister waits for the TaskManager's Register at f.
func awaitRegister(t *testing.T, f *fakeAM, what string) *rpc.Register {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-f.got:
			if r := m.GetRegister(); r != nil {
				return r
			}
		case <-deadline:
			t.Fatalf("no Register at %s", what)
		}
	}
}

// TestFollowsAMAddressFile: a TaskManager that loses its AM re-reads the address file on
// every retry and registers, with the same TaskManager and node ids, at the new AM it
// names, while the old address stays dead; a bad file leaves the last address in use.
func TestFollowsAMAddressFile(t *testing.T) {
	out, ckpt, dir := t.TempDir(), t.TempDir(), t.TempDir()
	registered := func(*rpc.Register) *rpc.JobManagerMessage {
		return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Registered{Registered: &rpc.Registered{
			JobId: "0123456789abcdef0123456789abcdef", JobName: examples.CheckableCountName,
			JobArgs: []string{"--records", "10", "--output", out}, HeartbeatIntervalMillis: 20,
			Config: map[string]string{"state.checkpoints.dir": "file://" + ckpt}}}}
	}
	am1, addr1, stop1 := startStoppableAM(t, registered)
	file := filepath.Join(dir, "am-address")
	publish(t, file, addr1)
	cfg := testConfig(addr1)
	cfg.AMAddressFile = "file://" + file
	cfg.ConnectTimeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after stop", err)
		}
	}()
	first := awaitRegister(t, am1, "the first AM")

	// The AM dies; the file names garbage for a while: the TaskManager keeps retrying.
	publish(t, file, "not an address")
	stop1()
	time.Sleep(100 * time.Millisecond)
	am2, addr2, _ := startStoppableAM(t, registered)
	if addr2 == addr1 {
		t.Fatalf("the second AM got the first one's address %s", addr1)
	}
	publish(t, file, addr2)
	second := awaitRegister(t, am2, "the second AM")
	if second.GetTaskManagerId() != first.GetTaskManagerId() || second.GetNodeId() != first.GetNodeId() ||
		second.GetSlots() != first.GetSlots() || second.GetTaskManagerId() != "tm-1" {
		t.Fatalf("registered at the new AM as %v, want the same ids as at the first (%v)", second, first)
	}
}

// TestAddressFileBadURI: an address file that is not a URI is a configuration error.
func TestAddressFileBadURI(t *testing.T) {
	cfg := testConfig("127.0.0.1:1")
	cfg.AMAddressFile = "am-address"
	if err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "AM address file") {
		t.Fatalf("Run with a relative address file = %v, want a configuration error", err)
	}
}

func TestParseAMAddress(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"am:6123\n", "am:6123", true},
		{"  10.0.0.1:1 ", "10.0.0.1:1", true},
		{"[::1]:65535", "[::1]:65535", true},
		{"", "", false},
		{"\n", "", false},
		{"am", "", false},
		{":6123", "", false},
		{"am:0", "", false},
		{"am:65536", "", false},
		{"am:06123", "", false},
		{"am:x", "", false},
		{"am:1\nam:2", "", false},
		{strings.Repeat("a", 2000) + ":1", "", false},
	}
	for _, tt := range tests {
		got, err := parseAMAddress([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseAMAddress(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseAMAddress(f *testing.F) {
	for _, s := range []string{"am:6123\n", "[::1]:1", "", "a:b:c", "h:65536"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		addr, err := parseAMAddress(b)
		if err != nil {
			return
		}
		again, err := parseAMAddress([]byte(addr + "\n"))
		if err != nil || again != addr {
			t.Fatalf("parseAMAddress(%q) = %q, but the result reparses as %q, %v", b, addr, again, err)
		}
		if strings.ContainsAny(addr, " \t\r\n") {
			t.Fatalf("parseAMAddress(%q) = %q holds white space", b, addr)
		}
	})
}
