package rpc

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGoBuildIDMatchesToolchain: the id read from the executable's note is the one
// `go tool buildid` prints for it.
func TestGoBuildIDMatchesToolchain(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id := goBuildID(f)
	if id == nil {
		t.Fatalf("%s: no Go build id note found", exe)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid unavailable: %v", err)
	}
	if want := strings.TrimSpace(string(out)); string(id) != want {
		t.Fatalf("goBuildID = %q, go tool buildid says %q", id, want)
	}
	if got := BuildID(); got != BuildID() || !strings.HasPrefix(got, Version+"-") || len(got) != len(Version)+1+16 {
		t.Fatalf("BuildID() = %q, want a stable %s-<16 hex digits>", got, Version)
	}
}

// TestGoBuildIDNotELF: input that is not an ELF executable with a Go note yields nil, so
// the digest falls back to the executable's bytes.
func TestGoBuildIDNotELF(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("#!/bin/sh\necho hi\n"), bytes.Repeat([]byte{0x7f}, 64)} {
		if id := goBuildID(bytes.NewReader(in)); id != nil {
			t.Errorf("goBuildID(%q) = %q, want nil", in, id)
		}
	}
}
