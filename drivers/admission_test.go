package drivers

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tidestream/tide/core"
)

func TestCallState(t *testing.T) {
	tests := []struct {
		name            string
		started, closed bool
		want            error
	}{
		{"before Start", false, false, ErrNotStarted},
		{"started", true, false, nil},
		{"closed after Start", true, true, ErrClosed},
		{"closed without Start", false, true, ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CallState(tt.started, tt.closed); got != tt.want {
				t.Fatalf("CallState(%v, %v) = %v, want %v", tt.started, tt.closed, got, tt.want)
			}
		})
	}
}

func TestCheckAdmission(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := Worker{ID: "tm-1", Node: "n1"}
	blockN1 := func(n core.NodeID) bool { return n == "n1" }
	tests := []struct {
		name     string
		state    error
		blocked  BlockedNodes
		wantErr  error
		wantText string
	}{
		{"admitted", nil, func(core.NodeID) bool { return false }, nil, ""},
		{"node blocked", nil, blockN1, ErrBlocked, "admit TaskManager tm-1 on node n1"},
		{"not started: blocklist not consulted", ErrNotStarted, nil, ErrNotStarted, "admit TaskManager tm-1"},
		{"closed wins over blocked", ErrClosed, blockN1, ErrClosed, "admit TaskManager tm-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAdmission(log, w, tt.state, tt.blocked)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("CheckAdmission = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("CheckAdmission = %v, want %v with %q", err, tt.wantErr, tt.wantText)
			}
		})
	}
}
