package rpc

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// Version is tide's release version, printed by `tide --version`.
const Version = "0.1.0"

// buildID may be set at link time (-ldflags "-X github.com/tidestream/tide/rpc.buildID=...").
// When empty, the build id is derived from the running executable's bytes, so two
// different builds never share an id and the same binary always has the same one.
var buildID string

var (
	buildOnce  sync.Once
	buildValue string
)

// BuildID identifies the running binary. A TaskManager sends it in Register and the AM
// refuses TaskManagers whose id differs from its own: AM and TaskManagers must run the
// same code (the job graph and the record encoding are compiled into the binary).
func BuildID() string {
	buildOnce.Do(func() {
		if buildID != "" {
			buildValue = buildID
			return
		}
		buildValue = Version + "-" + executableDigest()
	})
	return buildValue
}

func executableDigest() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
