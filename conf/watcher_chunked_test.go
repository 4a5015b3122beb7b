package conf

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chunkedVersion is configuration number v: three keys spread over the file (first line, middle,
// last line) whose values all derive from v, with comment padding in between, so any prefix of the
// file either fails to parse or yields values that do not belong together.
func chunkedVersion(v int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "jobmanager.adaptive-scheduler.min-parallelism-increase: %d\n", 100+v)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "# padding line %02d of version %d, so the file is written in many pieces\n", i, v)
	}
	fmt.Fprintf(&b, "rest.port: %d\n", 20000+v)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "# more padding %02d\n", i)
	}
	fmt.Fprintf(&b, "jobmanager.adaptive-scheduler.rescale-trigger.max-checkpoint-failures: %d\n", 300+v)
	return b.String()
}

// chunkedVersionOf returns the version a configuration came from, or ok=false when its three keys
// disagree (a partial file was applied).
func chunkedVersionOf(c *Config) (int, bool) {
	v := MinParallelismIncrease.Get(c) - 100
	return v, RestPort.Get(c) == 20000+v && RescaleTriggerMaxCheckpointFailures.Get(c) == 300+v
}

// TestWatcherNeverAppliesHalfWrittenFile rewrites the file in place (truncate, then many small
// writes) with one pause mid-write a little longer than the quiet period, the pattern of a slow
// script or editor that used to get a truncated configuration applied. Every configuration the
// watcher delivers must be a whole version. The guarantee holds for writers that pause for less
// than two quiet periods; a pause that long, measured on the writer's side (a descheduled test on
// a loaded machine), excuses a partial apply in that round, and the test says so.
func TestWatcherNeverAppliesHalfWrittenFile(t *testing.T) {
	const debounce = 50 * time.Millisecond
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	writeFile(t, path, chunkedVersion(0))
	h := startWatcher(t, dir, debounce)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	const rounds = 6
	for v := 1; v <= rounds; v++ {
		data := []byte(chunkedVersion(v))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		pauseAt := rng.Intn(len(data)/32 + 1)
		last := time.Now()
		var maxGap time.Duration
		for i, off := 0, 0; off < len(data); i++ {
			n := min(32, len(data)-off)
			if i == pauseAt {
				time.Sleep(debounce + debounce/4)
			}
			if _, err := f.Write(data[off : off+n]); err != nil {
				t.Fatal(err)
			}
			off += n
			now := time.Now()
			maxGap = max(maxGap, now.Sub(last))
			last = now
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		excused := maxGap >= 2*debounce
		deadline := time.After(hangGuard)
	wait:
		for {
			select {
			case r := <-h.reloads:
				got, whole := chunkedVersionOf(r.Config)
				if !whole {
					if excused {
						t.Logf("round %d: a partial file was applied after the writer paused %v (>= two quiet periods); not judged", v, maxGap)
						continue
					}
					t.Fatalf("round %d: half-written file applied (writer's longest pause %v): changes %+v", v, maxGap, r.Changes)
				}
				if got == v {
					break wait
				}
			case <-h.errs:
				// A truncated file that does not parse, or the empty file between truncate and
				// the first write, is rejected and the old configuration kept: allowed.
			case <-deadline:
				t.Fatalf("round %d: version never applied", v)
			}
		}
		if got, whole := chunkedVersionOf(h.w.Current()); !whole || got != v {
			t.Fatalf("round %d: Current() is version %d (whole=%v)", v, got, whole)
		}
	}
}
