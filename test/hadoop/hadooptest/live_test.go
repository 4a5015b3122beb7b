package hadooptest

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLiveCluster checks the running launcher: its env file, control channel and addresses.
func TestLiveCluster(t *testing.T) {
	e := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Command(ctx, "ping"); err != nil {
		t.Fatalf("ping: %v", err)
	}
	err := e.Command(ctx, "no-such-command")
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("unknown command: error = %v, want the launcher's refusal", err)
	}
	if err := e.Command(ctx, "two\nlines"); err == nil {
		t.Fatal("a command with a newline was sent")
	}
	conn, err := net.DialTimeout("tcp", e.Namenode, 10*time.Second)
	if err != nil {
		t.Fatalf("dialling the namenode at %s: %v", e.Namenode, err)
	}
	_ = conn.Close()
	if e.YARNResourceManager == "" {
		t.Log("launcher runs without YARN; YARN checks skipped")
		return
	}
	for _, addr := range append([]string{e.YARNResourceManager, e.YARNScheduler}, e.NodeManagers...) {
		conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dialling YARN address %s: %v", addr, err)
		}
		_ = conn.Close()
	}
}
