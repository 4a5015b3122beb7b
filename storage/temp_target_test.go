package storage

import (
	"path"
	"testing"
)

// FuzzTempTarget: the target of a temporary name is the base name it was made for; other
// names have none.
func FuzzTempTarget(f *testing.F) {
	f.Add("dir/.sink-0a1b2c3d.1-0-1.pending")
	f.Add(".tide-tmp.x.0123456789abcdef")
	f.Fuzz(func(t *testing.T, name string) {
		if n, err := cleanName(name, false); err == nil {
			tmp := path.Base(tempName(n))
			if got, ok := tempTarget(tmp); !ok || got != path.Base(n) {
				t.Fatalf("tempTarget(%q) = %q, %v; want %q", tmp, got, ok, path.Base(n))
			}
		}
		if got, ok := tempTarget(name); ok && (got == "" || len(name) != len(tempPrefix)+len(got)+17) {
			t.Fatalf("tempTarget(%q) = %q", name, got)
		}
	})
}
