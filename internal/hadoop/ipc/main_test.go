package ipc

import (
	"testing"

	"go.uber.org/goleak"
)

// Every connection's read loop must end with its client.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
