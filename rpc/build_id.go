package rpc

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// Version is tide's release version, printed by `tide --version`.
const Version = "0.1.0"

// buildID may be set at link time (-ldflags "-X github.com/tidestream/tide/rpc.buildID=...").
// When empty, the build id is derived from the running executable, so two different
// builds never share an id and the same binary always has the same one.
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

// executableDigest is the digest of the Go toolchain's build id recorded in the running
// executable (the ELF note .note.go.buildid: a hash of the link's inputs and of the
// linked output, so it changes with the code and the link flags), or else of the whole
// executable's bytes. Reading the note costs a few page reads; hashing the executable
// (over 100 MB) took ~0.1 s of CPU in every process start, the AM's included, before a
// TaskManager could register.
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
	if id := goBuildID(f); id != nil {
		h.Write([]byte("go-buildid:"))
		h.Write(id)
	} else {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "unknown"
		}
		if _, err := io.Copy(h, f); err != nil {
			return "unknown"
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// goBuildID returns the Go build id of the ELF executable r (nil when r is not ELF or has
// no Go build id note). The note is: name size, description size, type (4 = Go build id),
// the name "Go\x00\x00", then the id.
func goBuildID(r io.ReaderAt) []byte {
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil
	}
	s := ef.Section(".note.go.buildid")
	if s == nil {
		return nil
	}
	note, err := s.Data()
	if err != nil || len(note) < 16 {
		return nil
	}
	bo := ef.ByteOrder
	nameSize, descSize, typ := bo.Uint32(note[0:]), bo.Uint32(note[4:]), bo.Uint32(note[8:])
	const goBuildIDNote = 4
	if nameSize != 4 || typ != goBuildIDNote || !bytes.Equal(note[12:16], []byte("Go\x00\x00")) ||
		uint64(descSize) > uint64(len(note)-16) || descSize == 0 {
		return nil
	}
	return note[16 : 16+descSize]
}
