package conf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hangGuard only stops a broken test from hanging; no test depends on it for correctness.
const hangGuard = 20 * time.Second

type watchHarness struct {
	w       *Watcher
	reloads chan Reload
	errs    chan error
	stop    func()
}

// startWatcher loads dir, starts a Watcher on it and waits until the directory is watched.
func startWatcher(t *testing.T, dir string, debounce time.Duration, dynamic ...string) *watchHarness {
	t.Helper()
	initial, _, err := Load(dir, dynamic)
	if err != nil {
		t.Fatal(err)
	}
	h := &watchHarness{reloads: make(chan Reload, 100), errs: make(chan error, 100)}
	h.w, err = NewWatcher(initial, WatcherOptions{
		Dir: dir, Dynamic: dynamic, Debounce: debounce,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnReload: func(r Reload) { h.reloads <- r },
		OnError:  func(err error) { h.errs <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Run(ctx) }()
	select {
	case <-h.w.Ready():
	case err := <-done:
		t.Fatalf("Run returned before watching: %v", err)
	case <-time.After(hangGuard):
		t.Fatal("watcher never became ready")
	}
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(hangGuard):
			t.Error("Run did not return after cancel")
		}
	}
	t.Cleanup(h.stop)
	return h
}

// waitReload consumes reloads until one satisfies ok (intermediate states of a file being
// rewritten may be delivered first).
func (h *watchHarness) waitReload(t *testing.T, ok func(Reload) bool) Reload {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		select {
		case r := <-h.reloads:
			if ok(r) {
				return r
			}
		case err := <-h.errs:
			t.Fatalf("unexpected reload error: %v", err)
		case <-deadline:
			t.Fatal("no matching reload")
		}
	}
}

// waitError consumes errors until one satisfies ok; every reload seen meanwhile must satisfy
// allowed (half-written states may be delivered, the broken content never).
func (h *watchHarness) waitError(t *testing.T, ok func(error) bool, allowed func(Reload) bool) {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		select {
		case err := <-h.errs:
			if ok(err) {
				return
			}
		case r := <-h.reloads:
			if !allowed(r) {
				t.Fatalf("broken file was applied: %+v", r.Changes)
			}
		case <-deadline:
			t.Fatal("no matching reload error")
		}
	}
}

// replaceFile writes text to a temporary file and renames it over path, so a reader sees either
// the old or the new content, never a half-written file.
func replaceFile(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func minIncrease(n int) func(Reload) bool {
	return func(r Reload) bool { return MinParallelismIncrease.Get(r.Config) == n }
}

func TestWatcherInPlaceWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\n")
	h := startWatcher(t, dir, 20*time.Millisecond)

	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 4\nrest.port: 9000\n")
	r := h.waitReload(t, minIncrease(4))
	want := []Change{{Key: "jobmanager.adaptive-scheduler.min-parallelism-increase", Old: "1", New: "4", Reloadable: true}}
	if fmt.Sprint(r.Applied) != fmt.Sprint(want) {
		t.Errorf("Applied = %+v; want %+v", r.Applied, want)
	}
	if len(r.NeedsRestart) != 1 || r.NeedsRestart[0].Key != "rest.port" {
		t.Errorf("NeedsRestart = %+v", r.NeedsRestart)
	}
	if MinParallelismIncrease.Get(h.w.Current()) != 4 {
		t.Error("Current() not updated")
	}
	if s := h.w.Stats(); s.Reloads < 1 || s.Failures != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestWatcherRenameOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\n")
	h := startWatcher(t, dir, 20*time.Millisecond)

	tmp := filepath.Join(dir, ".flink-conf.yaml.swp")
	writeFile(t, tmp, "jobmanager.adaptive-scheduler.min-parallelism-increase: 7\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	h.waitReload(t, minIncrease(7))
}

// TestWatcherConfigMapSymlinkSwap reproduces how the kubelet updates a mounted ConfigMap:
// flink-conf.yaml → ..data/flink-conf.yaml, ..data → ..<timestamp>; an update writes a new
// timestamped directory and atomically renames a new ..data symlink over the old one.
func TestWatcherConfigMapSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	mkVersion := func(name, text string) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name, FileName), text)
	}
	mkVersion("..2026_01_01_00_00_00.1", "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\n")
	if err := os.Symlink("..2026_01_01_00_00_00.1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", FileName), filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	h := startWatcher(t, dir, 20*time.Millisecond)

	mkVersion("..2026_01_01_00_01_00.2", "jobmanager.adaptive-scheduler.min-parallelism-increase: 5\n")
	if err := os.Symlink("..2026_01_01_00_01_00.2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_01_01_00_00_00.1")); err != nil {
		t.Fatal(err)
	}
	h.waitReload(t, minIncrease(5))
}

func TestWatcherInvalidFileKeepsOldConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	replaceFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 2\n")
	h := startWatcher(t, dir, 20*time.Millisecond)

	replaceFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 3\nthis line is broken\n")
	neverThree := func(r Reload) bool { return MinParallelismIncrease.Get(r.Config) != 3 }
	var pe *ParseError
	h.waitError(t, func(err error) bool { return errors.As(err, &pe) }, neverThree)
	if pe.File != path || pe.Line != 2 {
		t.Fatalf("error names %s:%d; want %s:2", pe.File, pe.Line, path)
	}
	if got := MinParallelismIncrease.Get(h.w.Current()); got == 3 {
		t.Fatalf("Current() took the broken file")
	}
	if h.w.Stats().Failures < 1 {
		t.Fatalf("failure not counted: %+v", h.w.Stats())
	}

	// An invalid value is rejected the same way.
	replaceFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: zero\n")
	var ve *ValueError
	h.waitError(t, func(err error) bool { return errors.As(err, &ve) }, neverThree)
	if ve.Key != MinParallelismIncrease.Key() || ve.Source.Line != 1 || ve.Value != "zero" {
		t.Fatalf("value error = %v", ve)
	}

	// Fixing the file reloads, diffed against the last good configuration.
	replaceFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 6\n")
	r := h.waitReload(t, minIncrease(6))
	if r.Applied[0].Old != "2" {
		t.Fatalf("diffed against %q; want the last good value 2", r.Applied[0].Old)
	}
}

func TestWatcherDynamicPropertiesKeepWinning(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	replaceFile(t, path, "rest.port: 1000\njobmanager.adaptive-scheduler.min-parallelism-increase: 1\n")
	h := startWatcher(t, dir, 20*time.Millisecond, "-Drest.port=2000")

	replaceFile(t, path, "rest.port: 3000\njobmanager.adaptive-scheduler.min-parallelism-increase: 2\n")
	r := h.waitReload(t, minIncrease(2))
	if RestPort.Get(r.Config) != 2000 {
		t.Fatalf("rest.port = %d; -D value lost", RestPort.Get(r.Config))
	}
	for _, c := range r.Changes {
		if c.Key == "rest.port" {
			t.Fatalf("rest.port reported as changed: %+v", c)
		}
	}
}

func TestWatcherCoalescesBursts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	replaceFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\n")
	h := startWatcher(t, dir, 300*time.Millisecond)

	const writes = 20
	for i := 2; i <= writes+1; i++ {
		replaceFile(t, path, fmt.Sprintf("jobmanager.adaptive-scheduler.min-parallelism-increase: %d\n", i))
	}
	h.waitReload(t, minIncrease(writes+1))
	h.stop()
	if got := h.w.Stats().Reloads; got >= writes {
		t.Fatalf("%d writes gave %d reloads; bursts are not coalesced", writes, got)
	}
}

// TestWatcherDebounce drives the event loop with synthetic events and a hand-fired timer: a burst
// of events re-arms one timer (stopping the previous one) and yields one reload when it fires;
// chmod-only events are ignored.
func TestWatcherDebounce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\n")
	initial, _, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var reloads atomic.Int32
	delivered := make(chan Reload, 10)
	w, err := NewWatcher(initial, WatcherOptions{
		Dir: dir, Debounce: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnReload: func(r Reload) { reloads.Add(1); delivered <- r },
	})
	if err != nil {
		t.Fatal(err)
	}
	type fakeTimer struct {
		c       chan time.Time
		stopped *atomic.Bool
	}
	armed := make(chan fakeTimer, 10)
	w.newTimer = func(d time.Duration) (<-chan time.Time, func() bool) {
		if d != time.Hour {
			t.Errorf("debounce %v; want 1h", d)
		}
		ft := fakeTimer{c: make(chan time.Time, 1), stopped: new(atomic.Bool)}
		armed <- ft
		return ft.c, func() bool { return !ft.stopped.Swap(true) }
	}
	events := make(chan fsnotify.Event)
	errs := make(chan error)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.loop(ctx, events, errs) }()

	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 9\n")
	var timers []fakeTimer
	for i := 0; i < 5; i++ {
		events <- fsnotify.Event{Name: path, Op: fsnotify.Write}
		timers = append(timers, <-armed)
	}
	events <- fsnotify.Event{Name: path, Op: fsnotify.Chmod}
	errs <- errors.New("queue overflow") // treated as "something changed": re-arms
	timers = append(timers, <-armed)
	for i, ft := range timers[:len(timers)-1] {
		if !ft.stopped.Load() {
			t.Errorf("timer %d was not stopped when re-armed", i)
		}
	}
	timers[len(timers)-1].c <- time.Now()
	// The quiet period read the file once; a second read one quiet period later must agree before
	// anything is applied.
	settle := <-armed
	select {
	case r := <-delivered:
		t.Fatalf("applied after one read: %+v", r.Changes)
	default:
	}
	// The file changes between the two reads (its event still in flight): not applied, and the
	// wait starts over from the new content.
	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 9\nrest.port: 1\n")
	settle.c <- time.Now()
	settle = <-armed
	select {
	case r := <-delivered:
		t.Fatalf("applied a file that changed between two reads: %+v", r.Changes)
	default:
	}
	writeFile(t, path, "jobmanager.adaptive-scheduler.min-parallelism-increase: 9\n")
	settle.c <- time.Now()
	settle = <-armed
	settle.c <- time.Now()
	select {
	case r := <-delivered:
		if MinParallelismIncrease.Get(r.Config) != 9 {
			t.Fatalf("reload has %d", MinParallelismIncrease.Get(r.Config))
		}
	case <-time.After(hangGuard):
		t.Fatal("no reload after the timer fired")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := reloads.Load(); n != 1 {
		t.Fatalf("%d reloads; want 1", n)
	}
	if s := w.Stats(); s.Unstable != 2 {
		t.Fatalf("stats = %+v; want 2 unstable second reads", s)
	}
	if len(armed) != 0 {
		t.Fatalf("chmod event armed a timer")
	}
}

func TestWatcherStopsWithoutLeaks(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, FileName), "rest.port: 1\n")
	h := startWatcher(t, dir, time.Millisecond)
	h.stop()
	if err := h.w.Run(context.Background()); err == nil {
		t.Fatal("second Run did not fail")
	}
}

func TestWatcherErrors(t *testing.T) {
	if _, err := NewWatcher(nil, WatcherOptions{Dir: "x"}); err == nil {
		t.Error("nil initial config accepted")
	}
	if _, err := NewWatcher(Defaults(), WatcherOptions{}); err == nil {
		t.Error("empty directory accepted")
	}
	if _, err := NewWatcher(Defaults(), WatcherOptions{Dir: "x", Dynamic: []string{"-Dx"}}); err == nil {
		t.Error("bad dynamic property accepted")
	}
	w, err := NewWatcher(Defaults(), WatcherOptions{Dir: filepath.Join(t.TempDir(), "missing")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err == nil {
		t.Error("Run on a missing directory did not fail")
	}
}
