package tidecli

import (
	"path/filepath"
	"strconv"
	"strings"
)

// localOutcome reads how a local cluster's job ended from its AM's log: the final status
// and diagnostics of the last "standalone application deregistered" line (for example
// "KILLED", "job cancelled; latest checkpoint kept at ..."). ok is false when the AM
// ended without deregistering (it failed, or was stopped before the job ended).
func localOutcome(logDir string) (status, diagnostics string, ok bool) {
	// The deregistration is among the AM's last lines: its final MiB holds it.
	line := lastLogLine(filepath.Join(logDir, "jobmanager.log"), 1<<20, func(l string) bool {
		return strings.Contains(l, `msg="standalone application deregistered"`)
	})
	return parseOutcome(line)
}

// parseOutcome reads status= and diagnostics= (quoted or bare, as log/slog's text handler
// writes them) from one log line.
func parseOutcome(line string) (status, diagnostics string, ok bool) {
	status, ok = logValue(line, "status")
	if !ok {
		return "", "", false
	}
	diagnostics, _ = logValue(line, "diagnostics")
	return status, diagnostics, true
}

// logValue returns the value of key in a log/slog text line.
func logValue(line, key string) (string, bool) {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return "", false
	}
	rest := line[i+len(key)+2:]
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", false
		}
		v, err := strconv.Unquote(q)
		return v, err == nil
	}
	v, _, _ := strings.Cut(rest, " ")
	return v, true
}
