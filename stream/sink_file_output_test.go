package stream

import (
	"strings"
	"testing"

	"github.com/tidestream/tide/storage"
)

// FuzzParseOutput: an accepted output resolves to a URI the storage layer accepts; a refused
// one names the sink.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{"hdfs://nn:8020/out", "hdfs:///out", "file:///tmp/o", "/tmp/a b", "out", "./x:y", "s3://b/o", "x:y", "file:out", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		o, err := ParseOutput("sink", dir)
		if err != nil {
			if !strings.Contains(err.Error(), `file sink "sink"`) {
				t.Fatalf("ParseOutput(%q): %v does not name the sink", dir, err)
			}
			return
		}
		uri, err := o.resolve()
		if err != nil {
			t.Fatalf("ParseOutput(%q) accepted, resolve: %v", dir, err)
		}
		if err := storage.CheckURI(uri); err != nil {
			t.Fatalf("ParseOutput(%q) resolves to %q, which storage refuses: %v", dir, uri, err)
		}
	})
}
