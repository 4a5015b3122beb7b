package kubelet

import (
	"os"
	"path/filepath"
	"testing"
)

func readLinkTarget(t *testing.T, p string) string {
	t.Helper()
	s, err := os.Readlink(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWriteAtomicLayoutAndSwap(t *testing.T) {
	dir := t.TempDir()
	v1 := map[string]volumeFile{"flink-conf.yaml": {data: []byte("a: 1\n")}, "sub/x": {data: []byte("x"), mode: 0o600}}
	changed, err := writeAtomic(dir, v1)
	if err != nil || !changed {
		t.Fatalf("first write: changed %v, %v", changed, err)
	}
	data1 := readLinkTarget(t, filepath.Join(dir, "..data"))
	if got := readLinkTarget(t, filepath.Join(dir, "flink-conf.yaml")); got != "..data/flink-conf.yaml" {
		t.Fatalf("key symlink -> %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "x")); string(b) != "x" {
		t.Fatalf("sub/x = %q", b)
	}
	if st, _ := os.Stat(filepath.Join(dir, "sub", "x")); st.Mode().Perm() != 0o600 {
		t.Fatalf("sub/x mode %v", st.Mode())
	}
	if changed, err := writeAtomic(dir, v1); err != nil || changed {
		t.Fatalf("same content again: changed %v, %v", changed, err)
	}
	v2 := map[string]volumeFile{"flink-conf.yaml": {data: []byte("a: 2\n")}, "new": {data: []byte("n")}}
	if changed, err := writeAtomic(dir, v2); err != nil || !changed {
		t.Fatalf("second write: changed %v, %v", changed, err)
	}
	data2 := readLinkTarget(t, filepath.Join(dir, "..data"))
	if data2 == data1 {
		t.Fatal("..data still points at the first version")
	}
	if _, err := os.Stat(filepath.Join(dir, data1)); !os.IsNotExist(err) {
		t.Fatalf("old version %s not removed: %v", data1, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flink-conf.yaml")); string(b) != "a: 2\n" {
		t.Fatalf("flink-conf.yaml = %q after the swap", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Fatalf("removed key's symlink still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new")); string(b) != "n" {
		t.Fatalf("new = %q", b)
	}
}

func TestWriteAtomicRefusesEscapingPaths(t *testing.T) {
	for _, p := range []string{"/abs", "../up", "a/../../b", "..data", "a//b"} {
		if _, err := writeAtomic(t.TempDir(), map[string]volumeFile{p: {data: []byte("x")}}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}
