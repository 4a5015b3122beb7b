package am

import (
	"crypto/rand"
	"encoding/hex"
)

// newRunID returns 8 random hex digits naming one AM process. Two AMs of the same job
// (a restart, a recovery on YARN) get different ids, so files named after (run id,
// attempt) never collide even though each AM counts its attempts from 1.
func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
