package tidecli

import (
	"bytes"
	"context"
	"regexp"
	"testing"
)

// TestUploadProgress stages a 2 MB file and a small one through uploadProgress: the big one
// prints where it goes and how long it took, the small one nothing; both are committed.
func TestUploadProgress(t *testing.T) {
	ctx := context.Background()
	s := tempStorage(t)
	var out bytes.Buffer
	p := uploadProgress{Storage: s, out: &out}
	for name, size := range map[string]int{"app/tide": 2_000_000, "app/tide.yaml": 300} {
		w, err := p.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatalf("Commit %s: %v", name, err)
		}
		if fi, err := s.Stat(ctx, name); err != nil || fi.Size != int64(size) {
			t.Fatalf("Stat %s = %+v, %v; want %d bytes", name, fi, err, size)
		}
	}
	want := regexp.MustCompile(`^Uploading file://\S+/app/tide \(2\.0 MB\) \.\.\.\nUploaded 2\.0 MB in \S+ \(\S+ MB/s\)\n$`)
	if !want.Match(out.Bytes()) {
		t.Fatalf("progress output:\n%s\nwant it to match %s", out.String(), want)
	}
}
