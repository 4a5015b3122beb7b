package conf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the Watcher waits after the last file event before it reloads.
const DefaultDebounce = 200 * time.Millisecond

// Reload is one accepted configuration change.
type Reload struct {
	// Config is the new snapshot (file and -D); Current() returns it from now on.
	Config *Config
	// Changes lists every key whose effective value changed.
	Changes []Change
	// Applied is the subset the AM applies live (Spec.Reloadable).
	Applied []Change
	// NeedsRestart is the subset that only takes effect after a restart.
	NeedsRestart []Change
	// Warnings are the new file's warnings (unknown or deprecated keys, ...).
	Warnings []Warning
}

// WatcherOptions configures a Watcher.
type WatcherOptions struct {
	// Dir is the configuration directory (see ResolveDir); required.
	Dir string
	// Dynamic are the -D properties the initial configuration was loaded with; they keep winning
	// over the file on every reload.
	Dynamic []string
	// Debounce is the quiet period after the last event before reloading; DefaultDebounce if 0.
	Debounce time.Duration
	// Logger receives one line per reload, change and failure; slog.Default() if nil.
	Logger *slog.Logger
	// OnReload, if set, is called on the watcher's goroutine for each accepted change.
	OnReload func(Reload)
	// OnError, if set, is called on the watcher's goroutine when a changed file cannot be read,
	// parsed or validated (the previous configuration stays in effect).
	OnError func(error)
}

// WatcherStats counts what the Watcher did; expose them as metrics.
type WatcherStats struct {
	Reloads  uint64 // accepted changes delivered
	Failures uint64 // changed files rejected (unreadable, unparsable, invalid, empty)
	Unstable uint64 // second reads that differed from the first (file still being written)
}

// Watcher reloads the configuration when the file in its directory changes. It watches the
// directory, so a file replaced by rename (editors) or by a symlink swap (Kubernetes ConfigMaps
// update "..data") is seen like an in-place write; after each burst of events it re-reads the
// file through its symlinks and compares the bytes with the last ones it read. A changed file is
// applied only when a second read one quiet period later returns the same bytes, with no file
// event in between, and the whole file parses and validates; otherwise the configuration in
// effect stays and the log says why.
type Watcher struct {
	opts     WatcherOptions
	dynamic  []Entry
	current  atomic.Pointer[Config]
	reloads  atomic.Uint64
	failures atomic.Uint64
	ready    chan struct{}
	started  atomic.Bool
	unstable atomic.Uint64
	lastData []byte // last content applied or rejected; only the Run goroutine touches it
	readOnce bool
	// hadContent: the configuration in effect came from a non-empty file.
	hadContent bool
	// pending is a changed content read once and waiting for a second, identical read.
	pending     []byte
	pendingPath string
	// newTimer makes the debounce timer; tests replace it.
	newTimer func(time.Duration) (<-chan time.Time, func() bool)
}

// NewWatcher returns a Watcher that starts from initial (normally the result of Load with the same
// directory and dynamic properties).
func NewWatcher(initial *Config, opts WatcherOptions) (*Watcher, error) {
	if initial == nil {
		return nil, errors.New("config watcher: initial configuration is nil")
	}
	if opts.Dir == "" {
		return nil, errors.New("config watcher: no configuration directory (set one or FLINK_CONF_DIR)")
	}
	dyn, err := ParseDynamic(opts.Dynamic)
	if err != nil {
		return nil, fmt.Errorf("config watcher: %w", err)
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Watcher{opts: opts, dynamic: dyn, ready: make(chan struct{}), newTimer: realTimer}
	w.current.Store(initial)
	return w, nil
}

func realTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// Current returns the configuration in effect: the initial one or the last accepted reload.
func (w *Watcher) Current() *Config { return w.current.Load() }

// Stats returns the reload and failure counts so far.
func (w *Watcher) Stats() WatcherStats {
	return WatcherStats{Reloads: w.reloads.Load(), Failures: w.failures.Load(), Unstable: w.unstable.Load()}
}

// Ready is closed once the directory is being watched; changes made after that are seen.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Run watches until ctx is cancelled, then returns nil after releasing everything it started. It
// returns an error if the directory cannot be watched, or if called twice.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("config watcher: Run called twice")
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config watcher: start fsnotify: %w", err)
	}
	defer fw.Close()
	if err := fw.Add(w.opts.Dir); err != nil {
		return fmt.Errorf("config watcher: watch directory %s: %w", w.opts.Dir, err)
	}
	close(w.ready)
	w.opts.Logger.Info("watching configuration directory", "dir", w.opts.Dir, "debounce", w.opts.Debounce)
	// Catch a change made between Load and the start of the watch.
	w.firstRead()
	return w.loop(ctx, fw.Events, fw.Errors)
}

// loop debounces file events and reloads after each quiet period. A file is applied only when it
// reads the same twice, one quiet period apart, with no file event in between: a writer that
// rewrites the file in place (truncate, then write in chunks) is never caught half-way unless it
// pauses for longer than two quiet periods.
func (w *Watcher) loop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error) error {
	var fire, settle <-chan time.Time
	stopFire := func() bool { return false }
	stopSettle := func() bool { return false }
	defer func() { stopFire(); stopSettle() }()
	arm := func() {
		// Any event restarts the wait: a read taken before it no longer counts as stable.
		stopSettle()
		settle, w.pending = nil, nil
		stopFire()
		fire, stopFire = w.newTimer(w.opts.Debounce)
	}
	armSettle := func() {
		stopSettle()
		settle, stopSettle = w.newTimer(w.opts.Debounce)
	}
	if w.pending != nil {
		armSettle()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return fmt.Errorf("config watcher: event stream for %s closed", w.opts.Dir)
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			arm()
		case err, ok := <-errs:
			if !ok {
				return fmt.Errorf("config watcher: error stream for %s closed", w.opts.Dir)
			}
			// An overflow loses events: re-read to be safe.
			w.opts.Logger.Warn("configuration watch error; re-reading the file", "dir", w.opts.Dir, "err", err)
			arm()
		case <-fire:
			fire = nil
			if w.firstRead() {
				armSettle()
			}
		case <-settle:
			settle = nil
			if w.secondRead() {
				armSettle()
			}
		}
	}
}

// firstRead reads the file after a quiet period; it reports whether the content differs from the
// last one applied or rejected, in which case it is kept as pending until a second read confirms
// it.
func (w *Watcher) firstRead() bool {
	path, data, err := w.read()
	if err != nil {
		w.fail(err)
		return false
	}
	if w.readOnce && bytes.Equal(data, w.lastData) {
		w.pending = nil
		return false
	}
	w.pending, w.pendingPath = data, path
	return true
}

// secondRead re-reads the file one quiet period after firstRead. If the bytes are the same, the
// file is applied (or rejected); if not, it is still being written, and it reports that another
// read is needed.
func (w *Watcher) secondRead() bool {
	if w.pending == nil {
		return false
	}
	path, data, err := w.read()
	if err != nil {
		w.pending = nil
		w.fail(err)
		return false
	}
	if path != w.pendingPath || !bytes.Equal(data, w.pending) {
		w.opts.Logger.Info("configuration file is still changing; keeping the current configuration until two reads agree",
			"file", path, "first_bytes", len(w.pending), "second_bytes", len(data))
		w.unstable.Add(1)
		if w.readOnce && bytes.Equal(data, w.lastData) {
			w.pending = nil
			return false
		}
		w.pending, w.pendingPath = data, path
		return true
	}
	w.pending = nil
	w.apply(path, data)
	return false
}

func (w *Watcher) read() (string, []byte, error) {
	path, err := ConfigFile(w.opts.Dir)
	if err != nil {
		return "", nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return path, nil, fmt.Errorf("read configuration file %s: %w", path, err)
	}
	return path, data, nil
}

// apply parses, validates and diffs a stable file, then delivers the result.
func (w *Watcher) apply(path string, data []byte) {
	w.lastData, w.readOnce = data, true
	if len(bytes.TrimSpace(data)) == 0 && w.hadContent {
		// An editor or script that truncates the file and then stalls leaves it empty; applying that
		// would reset every key to its default at once.
		w.fail(fmt.Errorf("configuration file %s is empty; an empty file is never applied (write at least one key or a comment line)", path))
		return
	}
	cfg, warnings, err := loadBytes(data, path, w.dynamic)
	if err != nil {
		w.fail(err)
		return
	}
	w.hadContent = len(bytes.TrimSpace(data)) > 0
	old := w.current.Load()
	changes := cfg.Diff(old)
	w.current.Store(cfg)
	if len(changes) == 0 {
		w.opts.Logger.Debug("configuration file changed without effect", "file", path)
		return
	}
	LogWarnings(w.opts.Logger, warnings)
	r := Reload{Config: cfg, Changes: changes, Warnings: warnings}
	for _, ch := range changes {
		if ch.Reloadable {
			r.Applied = append(r.Applied, ch)
		} else {
			r.NeedsRestart = append(r.NeedsRestart, ch)
		}
		w.opts.Logger.Info("configuration changed", "key", ch.Key, "old", ch.Old, "new", ch.New, "live", ch.Reloadable)
	}
	for _, ch := range r.NeedsRestart {
		w.opts.Logger.Warn("configuration change takes effect only after a restart", "key", ch.Key, "new", ch.New)
	}
	w.reloads.Add(1)
	if w.opts.OnReload != nil {
		w.opts.OnReload(r)
	}
}

func (w *Watcher) fail(err error) {
	w.failures.Add(1)
	w.opts.Logger.Error("configuration reload failed; keeping the previous configuration", "dir", w.opts.Dir, "err", err)
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
}
