package tidecli

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTermSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain host-1.example", "plain host-1.example"},
		{"\x1b]0;pwned\a\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`},
		{"two\nlines\r\tand tab", `two\nlines\r\tand tab`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u202c zero\u200bwidth", `bidi \u202eevil\u202c zero\u200bwidth`},
		{"sep\u2028x", `sep\u2028x`},
		{"not utf-8 \xff\xfe", `not utf-8 \xff\xfe`},
		{"unicode stays: é, 日本, 🙂", "unicode stays: é, 日本, 🙂"},
	}
	for _, tt := range tests {
		if got := termSafe(tt.in); got != tt.want {
			t.Errorf("termSafe(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := errorText(errors.New("local\nsecond line \x1b[2J")); got != "local\n  second line \\x1b[2J" {
		t.Errorf("errorText = %q", got)
	}
}

// evil is what a hostile (or compromised) AM puts in every string it returns: an OSC that
// retitles the terminal, BEL, an erase-display, a newline that would start a forged row and a
// tab that would add a column.
const evil = "\x1b]0;pwned\a\x1b[2J\nFORGED ROW\tx\u009b"

// hostileAM answers every client command with evil strings.
func hostileAM(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	job := "/jobs/" + testJobID
	mux.HandleFunc("GET /jobs/overview", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"jobs": []map[string]any{{
			"jid": testJobID, "name": "job" + evil, "state": "RUNNING" + evil,
			"start-time": 1700000000000, "end-time": -1, "duration": 61000, "last-modification": 1700000001000}}})
	})
	mux.HandleFunc("GET "+job, func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"jid": testJobID, "name": "job" + evil, "state": "RUNNING",
			"start-time": 1700000000000, "duration": 61000, "attempt": 3,
			"vertices": []map[string]any{{"id": "v" + evil, "name": "n" + evil, "parallelism": 1, "maxParallelism": 128, "status": "RUNNING" + evil}}})
	})
	mux.HandleFunc("GET "+job+"/resource-requirements", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{})
	})
	mux.HandleFunc("GET /taskmanagers", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"taskmanagers": []map[string]any{
			{"id": "tm" + evil, "node": "node" + evil, "slotsNumber": 2, "freeSlots": 0, "timeSinceLastHeartbeat": 10, "blocked": false}}})
	})
	mux.HandleFunc("GET /blocklist", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"node" + evil: map[string]any{
			"action": "MARK_BLOCKED" + evil, "startTimestamp": "1700000000000", "endTimestamp": "9223372036854775807",
			"cause": evil, "taskManagers": []string{"tm" + evil}}})
	})
	mux.HandleFunc("PUT /blocklist/nodes/{node}", func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, 201, map[string]any{"action": "MARK_BLOCKED" + evil, "startTimestamp": "1", "endTimestamp": "2", "cause": evil, "taskManagers": []string{}})
	})
	mux.HandleFunc("DELETE /blocklist/node/{node}", func(w http.ResponseWriter, r *http.Request) {
		fail(w, 404, "node is not blocked"+evil, "second message"+evil)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return addr(srv)
}

// TestClientEscapesWhatTheAMSends: tables, progress lines, status and errors print every
// string from the AM escaped; no control character reaches the terminal and no row or column
// is forged. --json stays valid JSON with the same strings escaped.
func TestClientEscapesWhatTheAMSends(t *testing.T) {
	m := hostileAM(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		rows     int // lines the output must have (0: not checked)
		mentions string
	}{
		{"blocklist list", []string{"blocklist", "list", "-m", m}, exitOK, 2, `\x1b]0;pwned\x07\x1b[2J\nFORGED ROW\tx\u009b`},
		{"taskmanagers", []string{"taskmanagers", "-m", m}, exitOK, 2, `tm\x1b]0;pwned`},
		{"list", []string{"list", "-m", m}, exitOK, 2, `job\x1b]0;pwned`},
		{"status", []string{"status", testJobID, "-m", m}, exitOK, 0, `RUNNING\x1b]0;pwned`},
		{"blocklist add", []string{"blocklist", "add", "n1", "-m", m}, exitOK, 1, `blocked (MARK_BLOCKED\x1b]0;pwned`},
		{"error from the AM", []string{"blocklist", "remove", "n1", "-m", m}, exitError, 1, `not blocked\x1b]0;pwned\x07\x1b[2J\nFORGED ROW`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runTide(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d; want %d:\n%s", code, tt.code, out)
			}
			if i := strings.IndexFunc(out, func(r rune) bool {
				return (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f)
			}); i >= 0 {
				t.Fatalf("output has the control character %q at %d:\n%q", out[i], i, out)
			}
			if strings.Contains(out, "\nFORGED") {
				t.Fatalf("a newline from the AM started a line:\n%s", out)
			}
			if tt.rows > 0 {
				if n := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1; n != tt.rows {
					t.Fatalf("%d lines; want %d:\n%s", n, tt.rows, out)
				}
			}
			if !strings.Contains(out, tt.mentions) {
				t.Fatalf("output does not show %s escaped:\n%s", tt.mentions, out)
			}
		})
	}
	out, code := runTide(t, "blocklist", "list", "--json", "-m", m)
	if code != exitOK {
		t.Fatalf("--json: exit %d:\n%s", code, out)
	}
	if strings.ContainsAny(out, "\x1b\a\u009b") {
		t.Fatalf("--json output has raw control characters:\n%q", out)
	}
	var got map[string]struct{ Cause string }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if got["node"+evil].Cause != evil {
		t.Fatalf("--json lost the cause: %+v", got)
	}
}

// FuzzTermSafe: whatever comes in, what goes out is valid UTF-8 without a character a
// terminal acts on, and plain text comes out unchanged.
func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{evil, "plain", "\xff", "a\u202eb", "é\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termSafe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("termSafe(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || unsafeRune(r) {
				t.Fatalf("termSafe(%q) = %q keeps %U", s, out, r)
			}
		}
		if !needsEscape(s) && out != s {
			t.Fatalf("termSafe changed plain %q to %q", s, out)
		}
	})
}
