package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
)

// recorder is a Fataler that records the failure instead of ending the test; Fatalf
// panics so that, as with testing.T, nothing after it runs.
type recorder struct{ msg string }

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(fatal{})
}

// run calls f with a recorder and returns the failure message ("" when none).
func run(f func(r *recorder)) (msg string) {
	r := &recorder{}
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(fatal); !ok {
				panic(v)
			}
			msg = r.msg
		}
	}()
	f(r)
	return ""
}

func TestWaitFor(t *testing.T) {
	calls := 0
	if msg := run(func(r *recorder) {
		WaitFor(r, "the third call", func() (bool, error) { calls++; return calls == 3, errors.New("not yet") })
	}); msg != "" || calls != 3 {
		t.Fatalf("WaitFor = %q after %d calls, want success at the third", msg, calls)
	}
	msg := run(func(r *recorder) {
		waitFor(r, "never", 30*time.Millisecond, func() (bool, error) { return false, errors.New("still broken") })
	})
	if !strings.Contains(msg, "waiting for never") || !strings.Contains(msg, "still broken") {
		t.Fatalf("WaitFor timeout message %q, want what and the last error", msg)
	}
}

func TestRunningAt(t *testing.T) {
	mk := func(state string, ps ...int) JobDetails {
		d := JobDetails{JobOverview: api.JobOverview{JID: "j", State: state}}
		for i, p := range ps {
			d.Vertices = append(d.Vertices, api.JobVertex{ID: fmt.Sprintf("v%d", i), Parallelism: p})
		}
		return d
	}
	tests := []struct {
		name string
		d    JobDetails
		p    int
		want string // "" : running at p
	}{
		{"all at p", mk("RUNNING", 2, 2), 2, ""},
		{"one vertex off", mk("RUNNING", 2, 3), 2, "vertex v1 at parallelism 3, want 2"},
		{"not running", mk("RESTARTING", 2), 2, "state RESTARTING"},
		{"no vertices", mk("RUNNING"), 1, "with 0 vertices"},
	}
	for _, tt := range tests {
		err := RunningAt(tt.d, tt.p)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: RunningAt = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestRESTHelpers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/jobs/overview":
			fmt.Fprint(w, `{"jobs":[{"jid":"abc"}]}`)
		case "/jobs/abc":
			fmt.Fprint(w, `{"jid":"abc","state":"RUNNING","attempt":4,"vertices":[{"id":"src","parallelism":3}]}`)
		case "/bad":
			fmt.Fprint(w, `{"jobs":`)
		default:
			http.Error(w, `{"errors":["no such thing"]}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	get := RESTGetter(srv.URL)
	if id := WaitJobID(t, get); id != "abc" {
		t.Fatalf("WaitJobID = %q, want abc", id)
	}
	if d := WaitRunningAt(t, get, "abc", 3); d.Attempt != 4 {
		t.Fatalf("WaitRunningAt = %+v, want attempt 4", d)
	}
	var v map[string]any
	if err := GetJSON(context.Background(), srv.URL+"/missing", &v); err == nil || !strings.Contains(err.Error(), "404 Not Found") || !strings.Contains(err.Error(), "no such thing") {
		t.Fatalf("GET of a missing path = %v, want the status and the body", err)
	}
	if err := GetJSON(context.Background(), srv.URL+"/bad", &v); err == nil || !strings.Contains(err.Error(), "decoding") {
		t.Fatalf("GET of a truncated body = %v, want a decoding error", err)
	}
}

// TestFreePort: the port can be bound, and it lies below the kernel's ephemeral range,
// where no outgoing connection or port-0 listener can take it before the test uses it.
func TestFreePort(t *testing.T) {
	for range 20 {
		p := FreePort(t)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("FreePort %d cannot be bound: %v", p, err)
		}
		ln.Close()
		if first, ok := ephemeralStart(); ok && (p < lowestTestPort || p >= first) {
			t.Fatalf("FreePort %d: want a port in [%d, %d), below the ephemeral range", p, lowestTestPort, first)
		}
	}
}

func TestRunCommand(t *testing.T) {
	out, err := RunCommand(context.Background(), time.Minute, []string{"GREETING=hi"}, "/bin/sh", "-c", `echo "$GREETING"; echo oops >&2; exit 3`)
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || out != "hi\noops\n" {
		t.Fatalf("RunCommand = %q, %v; want both streams and exit 3", out, err)
	}
	if _, err := RunCommand(context.Background(), 50*time.Millisecond, nil, "/bin/sh", "-c", "exec sleep 30"); err == nil {
		t.Fatal("RunCommand past its timeout succeeded")
	}
}
