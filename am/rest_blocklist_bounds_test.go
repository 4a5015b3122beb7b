package am

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink shared by the AM's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRESTBlocklistBounds: ids must be printable UTF-8 (a %FF%FE path segment is refused, not
// stored as U+FFFD), causes, merged causes and the number of nodes are bounded by the keys an
// operator can set, each refusal says which key, and a merge is logged without its cause.
func TestRESTBlocklistBounds(t *testing.T) {
	logs := &syncBuffer{}
	r := startRESTAM(t, restAMOptions{
		logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		dynamic: []string{
			"blocklist.cause.max-length=100",
			"blocklist.cause.max-merged-length=250",
			"blocklist.max-nodes=2",
		},
	})
	body := func(cause string, merge bool) string {
		b, _ := json.Marshal(map[string]any{"action": "MARK_BLOCKED", "cause": cause, "allowMerge": merge})
		return string(b)
	}
	wantErr := func(t *testing.T, method, path, reqBody string, status int, mention string) {
		t.Helper()
		code, _, b := r.call(t, method, path, reqBody)
		if code != status {
			t.Fatalf("%s %s = %d %s; want %d", method, path, code, b, status)
		}
		if msg := strings.Join(errorsOf(t, b), " "); !strings.Contains(msg, mention) {
			t.Fatalf("%s %s: %q does not mention %q", method, path, msg, mention)
		}
	}
	wantCode := func(t *testing.T, method, path, reqBody string, status int) []byte {
		t.Helper()
		code, _, b := r.call(t, method, path, reqBody)
		if code != status {
			t.Fatalf("%s %s = %d %s; want %d", method, path, code, b, status)
		}
		return b
	}
	listed := func(t *testing.T) map[string]struct{ Cause string } {
		t.Helper()
		var m map[string]struct{ Cause string }
		mustJSON(t, wantCode(t, "GET", "/blocklist", "", 200), &m)
		return m
	}

	wantErr(t, "PUT", "/blocklist/nodes/%FF%FE", body("c", false), 400, "not valid UTF-8")
	wantErr(t, "PUT", "/blocklist/nodes/n%1B%5B2J", body("c", false), 400, "non-printable")
	wantErr(t, "PUT", "/blocklist/nodes/"+strings.Repeat("h", 254), body("c", false), 400, "at most 253")
	wantErr(t, "PUT", "/blocklist/nodes/n1", body(strings.Repeat("x", 101), false), 413, "blocklist.cause.max-length")
	if m := listed(t); len(m) != 0 {
		t.Fatalf("refused requests left %v", m)
	}

	a, b, c := strings.Repeat("a", 100), strings.Repeat("b", 100), strings.Repeat("c", 100)
	wantCode(t, "PUT", "/blocklist/nodes/n1", body(a, false), 201)
	wantCode(t, "PUT", "/blocklist/nodes/n1", body(b, true), 202)
	wantErr(t, "PUT", "/blocklist/nodes/n1", body(c, true), 413, "blocklist.cause.max-merged-length")
	// Repeating a cause it already has adds nothing and is accepted.
	wantCode(t, "PUT", "/blocklist/nodes/n1", body(a, true), 202)
	if got := listed(t)["n1"].Cause; got != a+","+b {
		t.Fatalf("n1 cause after a refused merge = %d bytes; want the two accepted causes", len(got))
	}

	wantCode(t, "PUT", "/blocklist/nodes/n2", body("hot", false), 201)
	wantErr(t, "PUT", "/blocklist/nodes/n3", body("hot", false), 413, "blocklist.max-nodes")
	wantCode(t, "DELETE", "/blocklist/node/n2", "", 200)
	wantCode(t, "PUT", "/blocklist/nodes/n3", body("hot", false), 201)

	// The merge is logged with the merged cause's length, not the cause (or a's 100 bytes)
	// again; the first block logs its cause once.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "node blocking merged") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	text := logs.String()
	if !strings.Contains(text, "node blocking merged") {
		t.Fatalf("no merge logged:\n%s", text)
	}
	if n := strings.Count(text, b); n != 0 {
		t.Errorf("the merged-in cause appears %d times in the log; want 0", n)
	}
	if n := strings.Count(text, a); n > 1 {
		t.Errorf("the first cause appears %d times in the log; want at most 1", n)
	}
}

// TestRESTBlocklistDefaultsFollowSeed003: a body without "action" takes
// blocklist.default-action; a request without an end takes blocklist.default-timeout; an
// explicit permanent end (Long.MAX_VALUE) stays permanent.
func TestRESTBlocklistDefaultsFollowSeed003(t *testing.T) {
	r := startRESTAM(t, restAMOptions{dynamic: []string{
		"blocklist.default-action=MARK_BLOCKED_AND_EVACUATE_TASKS",
		"blocklist.default-timeout=10 min",
	}})
	type info struct {
		Action string
		Start  int64 `json:"startTimestamp,string"`
		End    int64 `json:"endTimestamp,string"`
	}
	put := func(path, body string) info {
		t.Helper()
		code, _, b := r.call(t, "PUT", path, body)
		if code != 201 {
			t.Fatalf("PUT %s %s = %d %s; want 201", path, body, code, b)
		}
		var n info
		mustJSON(t, b, &n)
		return n
	}
	n1 := put("/blocklist/nodes/n1", `{"cause":"no action given"}`)
	if n1.Action != "MARK_BLOCKED_AND_EVACUATE_TASKS" {
		t.Errorf("action %s; want blocklist.default-action", n1.Action)
	}
	if n1.End != n1.Start+(10*time.Minute).Milliseconds() {
		t.Errorf("end %d; want start %d + blocklist.default-timeout", n1.End, n1.Start)
	}
	n2 := put("/blocklist/nodes/n2", `{"action":"MARK_BLOCKED","cause":"forever","endTimestamp":9223372036854775807}`)
	if n2.Action != "MARK_BLOCKED" || n2.End != math.MaxInt64 {
		t.Errorf("explicit permanent block = %+v; want MARK_BLOCKED until Long.MAX_VALUE", n2)
	}
	n3 := put("/blocklist/nodes/n3", `{"cause":"forever","endTimestamp":"9223372036854775807"}`)
	if n3.End != math.MaxInt64 {
		t.Errorf("explicit permanent block (string) = %+v; want Long.MAX_VALUE", n3)
	}
	code, _, b := r.call(t, "GET", "/blocklist", "")
	var m map[string]info
	if code != 200 {
		t.Fatalf("GET /blocklist = %d", code)
	}
	mustJSON(t, b, &m)
	if m["n2"].End != math.MaxInt64 || m["n3"].End != math.MaxInt64 || m["n1"].End == math.MaxInt64 {
		t.Errorf("GET /blocklist = %s", b)
	}
}
