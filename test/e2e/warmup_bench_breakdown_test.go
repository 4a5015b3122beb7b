package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// restoreBreakdown is where the slowest restore of one attempt spent its time, read
// from the TaskManagers' logs: the subtask's whole restore ("restoring state"
// restore_ms), fetching its files from local state or storage (fetch_ms), opening the
// base and excising what it does not own (open_excise_ms) and merging the other writers'
// key groups in (merge_ms, merged_bytes).
type restoreBreakdown struct {
	subtask                         string
	restore, fetch, open, merge     int64 // ms
	mergedBytes, downloaded, locals int64
}

func (r restoreBreakdown) String() string {
	if r.subtask == "" {
		return "no restore logged"
	}
	return fmt.Sprintf("slowest restore %s %d ms: fetch %d ms (%s local, %s downloaded), open+excise %d ms, merge %d ms (%s)",
		r.subtask, r.restore, r.fetch, fmtSize(r.locals), fmtSize(r.downloaded), r.open, r.merge, fmtSize(r.mergedBytes))
}

// slowestRestore scans the TaskManager logs in dir for the restores of attempt (the AM's
// number: TaskManagers log it with the AM run above bit 32).
func slowestRestore(dir string, attempt int64) (restoreBreakdown, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "taskmanager-*.log"))
	if err != nil {
		return restoreBreakdown{}, err
	}
	per := map[string]*restoreBreakdown{}
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			return restoreBreakdown{}, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var msg string
			switch {
			case strings.Contains(line, `msg="restoring state"`):
				msg = "state"
			case strings.Contains(line, `msg="restored the pebble database"`):
				msg = "db"
			case strings.Contains(line, `msg="pebble database restored"`):
				msg = "pebble"
			default:
				continue
			}
			kv := logFields(line)
			a, err := strconv.ParseInt(kv["attempt"], 10, 64)
			if err != nil || a&0xffffffff != attempt {
				continue
			}
			key := filepath.Base(name) + " " + kv["vertex"] + "-" + kv["subtask"]
			b := per[key]
			if b == nil {
				b = &restoreBreakdown{subtask: key}
				per[key] = b
			}
			n := func(k string) int64 { v, _ := strconv.ParseInt(kv[k], 10, 64); return v }
			switch msg {
			case "state":
				b.restore, b.downloaded, b.locals = n("restore_ms"), n("downloaded_bytes"), n("local_bytes")
			case "db":
				b.fetch = n("fetch_ms")
			case "pebble":
				b.open, b.merge, b.mergedBytes = n("link_ms")+n("open_excise_ms"), n("merge_ms"), n("merged_bytes")
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return restoreBreakdown{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	var slowest restoreBreakdown
	for _, b := range per {
		if slowest.subtask == "" || b.restore > slowest.restore {
			slowest = *b
		}
	}
	return slowest, nil
}

// logFields splits a slog text line into its key=value pairs (quoted values unquoted).
func logFields(line string) map[string]string {
	kv := map[string]string{}
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			break
		}
		k, rest := line[:eq], line[eq+1:]
		var v string
		if strings.HasPrefix(rest, `"`) {
			if q, err := strconv.QuotedPrefix(rest); err == nil {
				v, _ = strconv.Unquote(q)
				rest = rest[len(q):]
			} else {
				v, rest = rest, ""
			}
		} else if sp := strings.IndexByte(rest, ' '); sp >= 0 {
			v, rest = rest[:sp], rest[sp:]
		} else {
			v, rest = rest, ""
		}
		kv[k] = v
		line = rest
	}
	return kv
}
