package storage

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestCleanName(t *testing.T) {
	tests := []struct {
		in      string
		root    bool
		want    string
		wantErr bool
	}{
		{in: "a", want: "a"},
		{in: "job/chk-1/_metadata", want: "job/chk-1/_metadata"},
		{in: "dir/", want: "dir"},
		{in: "", root: true, want: ""},
		{in: ".", root: true, want: ""},
		{in: "", wantErr: true},
		{in: ".", wantErr: true},
		{in: "/abs", wantErr: true},
		{in: "a/../b", wantErr: true},
		{in: "..", wantErr: true},
		{in: "a//b", wantErr: true},
		{in: "./a", wantErr: true},
		{in: ".tide-tmp.x", wantErr: true},
		{in: "d/.tide-tmp.x.123", wantErr: true},
		{in: "a\nb", wantErr: true},
		{in: "a:b", wantErr: true},
		{in: ".hidden", want: ".hidden"},
	}
	for _, tc := range tests {
		got, err := cleanName(tc.in, tc.root)
		if tc.wantErr {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("cleanName(%q, %v) = %q, %v; want ErrInvalidName", tc.in, tc.root, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("cleanName(%q, %v) = %q, %v; want %q", tc.in, tc.root, got, err, tc.want)
		}
	}
}

func TestTempName(t *testing.T) {
	a, b := tempName("dir/sub/file"), tempName("dir/sub/file")
	if a == b {
		t.Fatalf("tempName returned %q twice", a)
	}
	dir, base := path.Split(a)
	if dir != "dir/sub/" || !isTempName(base) || !strings.Contains(base, "file") {
		t.Fatalf("tempName = %q, want a hidden temporary name beside dir/sub/file", a)
	}
	if _, err := cleanName(a, false); err == nil {
		t.Fatalf("cleanName accepted the temporary name %q", a)
	}
}

func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a", "a/b/c", "../x", "/x", "a//b", ".", "", ".tide-tmp.a", "a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := cleanName(in, true)
		if err != nil {
			return
		}
		if got == "" {
			return
		}
		// An accepted name stays inside the root and is already clean.
		if path.Clean(got) != got || strings.HasPrefix(got, "/") || got == ".." || strings.HasPrefix(got, "../") {
			t.Fatalf("cleanName(%q) = %q escapes the root or is not clean", in, got)
		}
		for _, elem := range strings.Split(got, "/") {
			if isTempName(elem) {
				t.Fatalf("cleanName(%q) = %q has a temporary element", in, got)
			}
		}
		if again, err := cleanName(got, true); err != nil || again != got {
			t.Fatalf("cleanName is not idempotent on %q: %q, %v", got, again, err)
		}
	})
}
