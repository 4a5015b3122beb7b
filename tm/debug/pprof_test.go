package debug

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestServePprof: the endpoint serves the allocation and goroutine profiles of this process
// on loopback, and refuses an address off loopback naming the key.
func TestServePprof(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	addr, err := ServePprof(ctx, "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/debug/pprof/allocs?debug=1":    "heap profile",
		"/debug/pprof/goroutine?debug=1": "TestServePprof",
		"/debug/pprof/":                  "allocs",
	} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("GET %s: %s, body without %q: %.200s", path, resp.Status, want, body)
		}
	}

	_, err = ServePprof(ctx, "0.0.0.0:0", log)
	if err == nil || !strings.Contains(err.Error(), PprofKey) || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("ServePprof off loopback: got %v, want a refusal naming %s", err, PprofKey)
	}
	_, err = ServePprof(ctx, "not an address", log)
	if err == nil || !strings.Contains(err.Error(), PprofKey) {
		t.Fatalf("ServePprof on a bad address: got %v, want an error naming %s", err, PprofKey)
	}
}
