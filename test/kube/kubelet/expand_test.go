package kubelet

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "NODE": "kube-node-2", "EMPTY": ""}
	look := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "1"},
		{"-Dnode=$(NODE)", "-Dnode=kube-node-2"},
		{"$(A)$(A)", "11"},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$1"},
		{"$(UNKNOWN)", "$(UNKNOWN)"},
		{"$(EMPTY)x", "x"},
		{"$(A", "$(A"},
		{"$()", "$()"},
		{"cost $5", "cost $5"},
		{"trailing $", "trailing $"},
		{"$HOME", "$HOME"},
	}
	for _, tt := range tests {
		if got := expand(tt.in, look); got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzExpand: expansion never panics, leaves strings without '$' alone, and with no
// variables known only ever shortens "$$" to "$".
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "$(A)", "$$(A)", "$(", "a$b$(c)$$", "$(A)$(B"} {
		f.Add(s)
	}
	none := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, s string) {
		got := expand(s, none)
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("expand(%q) = %q without any '$'", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("expand(%q) = %q grew without variables", s, got)
		}
		if strings.ReplaceAll(s, "$$", "$") != got && !strings.Contains(s, "$$") {
			t.Fatalf("expand(%q) = %q changed more than $$", s, got)
		}
	})
}
