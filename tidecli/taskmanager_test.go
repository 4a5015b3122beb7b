package tidecli

import (
	"testing"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/tm/netplane"
)

// TestDataPlaneOptions: taskmanager.network.memory.* reach the TaskManager's data plane,
// 0 floating buffers meaning none (not netplane's default).
func TestDataPlaneOptions(t *testing.T) {
	tests := []struct {
		name                   string
		entries                []conf.Entry
		perChannel, floatGates int
	}{
		{"defaults", nil, 2, 8},
		{"set", []conf.Entry{{Key: "taskmanager.network.memory.buffers-per-channel", Value: "4"},
			{Key: "taskmanager.network.memory.floating-buffers-per-gate", Value: "16"}}, 4, 16},
		{"no floating buffers", []conf.Entry{{Key: "taskmanager.network.memory.floating-buffers-per-gate", Value: "0"}}, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := conf.Build(tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			p, err := netplane.Listen(t.Context(), "127.0.0.1:0", dataPlaneOptions(cfg))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if per, fl := p.Credits(); per != tc.perChannel || fl != tc.floatGates {
				t.Fatalf("credits %d per channel, %d floating per gate; want %d, %d", per, fl, tc.perChannel, tc.floatGates)
			}
		})
	}
}
