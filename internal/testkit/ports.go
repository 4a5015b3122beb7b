package testkit

import "github.com/tidestream/tide/standalone"

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t Fataler) int {
	t.Helper()
	p, err := standalone.FreePort()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}
