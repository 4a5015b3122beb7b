package tidecli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidestream/tide/api"
)

// TestProgressFailures: tide run prints each new failure of the exception history once,
// in full, and a failure with the error of the one before it in short.
func TestProgressFailures(t *testing.T) {
	var mu sync.Mutex
	var newest *api.ExceptionEntry
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jobs/"+testJobID+"/exceptions" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		h := api.ExceptionHistory{Entries: []api.ExceptionEntry{}}
		if newest != nil {
			h.Entries = append(h.Entries, *newest)
		}
		writeBody(w, 200, api.JobExceptions{ExceptionHistory: h})
	}))
	t.Cleanup(srv.Close)
	p, err := newProgress(nil, addr(srv), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fail := func(attempt, at int64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		newest = &api.ExceptionEntry{Stacktrace: msg, Attempt: attempt, Timestamp: at}
	}
	steps := []struct {
		name   string
		set    func()
		want   string // "" : nothing printed
		wantOK bool
	}{
		{"no failure yet", func() {}, "", false},
		{"first failure in full", func() { fail(1, 1000, "listing hdfs://nn:1/x: connection refused") },
			"(attempt 1): listing hdfs://nn:1/x: connection refused", true},
		{"the same failure again: nothing", func() {}, "", false},
		{"next attempt, same error: short", func() { fail(2, 2000, "listing hdfs://nn:1/x: connection refused") },
			"attempt 2 failed with the same error as attempt 1", true},
		{"another error: in full", func() { fail(3, 3000, "checkpoint 4 expired") }, "(attempt 3): checkpoint 4 expired", true},
		{"the same error again in the same attempt", func() { fail(3, 3500, "checkpoint 4 expired") },
			"attempt 3 failed again with the same error", true},
	}
	for _, st := range steps {
		st.set()
		got, ok := p.newFailure(context.Background(), testJobID)
		if ok != st.wantOK || !strings.Contains(got, st.want) {
			t.Fatalf("%s: got %q, %v; want %q, %v", st.name, got, ok, st.want, st.wantOK)
		}
	}
	if got, ok := p.newFailure(context.Background(), ""); ok {
		t.Fatalf("no job yet: printed %q", got)
	}
}
