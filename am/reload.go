package am

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
)

// ConfigWatch turns on live reload of flink-conf.yaml: the AM watches Dir and applies the
// reloadable keys of every accepted change while the job runs. A zero Dir turns it off.
type ConfigWatch struct {
	// Dir is the configuration directory (--configDir or FLINK_CONF_DIR).
	Dir string
	// Dynamic are the -D properties the AM was started with; they keep winning over the file.
	Dynamic []string
	// Initial is the configuration the AM was started with (conf.Load of Dir and Dynamic).
	Initial *conf.Config
	// Debounce is the quiet period after the last file event; conf.DefaultDebounce if 0.
	Debounce time.Duration
}

// ReloadStats counts what live reload did.
type ReloadStats struct {
	Reloads  uint64 // accepted changes (each may carry live keys, restart-only keys or both)
	Failures uint64 // changed files rejected (unreadable, unparsable, invalid); the old configuration stayed
}

// reloader owns the configuration watcher and the configuration in force. The watcher's
// goroutine hands each accepted change to the loop; only the loop applies it.
type reloader struct {
	watcher *conf.Watcher
	// inForce is the configuration the AM runs with: the latest file, except keys that need a
	// restart, which keep the value the AM started with.
	inForce atomic.Pointer[conf.Config]
	// pending maps each restart-only key changed in the file to the value the AM runs with
	// (loop goroutine only).
	pending map[string]string
}

// newReloader returns nil when w has no directory (reload off).
func newReloader(a *AM, w ConfigWatch) (*reloader, error) {
	if w.Dir == "" {
		return nil, nil
	}
	if w.Initial == nil {
		return nil, fmt.Errorf("config watch of %s: no initial configuration", w.Dir)
	}
	r := &reloader{pending: map[string]string{}}
	r.inForce.Store(w.Initial)
	watcher, err := conf.NewWatcher(w.Initial, conf.WatcherOptions{
		Dir: w.Dir, Dynamic: w.Dynamic, Debounce: w.Debounce, Logger: a.log,
		OnReload: func(rl conf.Reload) {
			if !a.post(func() { a.applyReload(rl) }) {
				a.log.Info("configuration change after the job ended; ignored", "changes", len(rl.Changes))
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("config watch of %s: %w", w.Dir, err)
	}
	r.watcher = watcher
	return r, nil
}

// run watches until ctx ends.
func (r *reloader) run(ctx context.Context, a *AM) {
	if err := r.watcher.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		a.log.Error("configuration watcher stopped; live reload is off", "err", err)
	}
}

// applyReload applies one accepted change on the loop goroutine: the keys that need a
// restart keep their old value, the others reach the core (scheduler, restart strategy,
// blocklist defaults) and the checkpoint trigger loop.
func (a *AM) applyReload(rl conf.Reload) {
	r := a.reload
	for _, ch := range rl.NeedsRestart {
		running, ok := r.pending[ch.Key]
		if !ok {
			running = ch.Old
		}
		if ch.New == running {
			delete(r.pending, ch.Key)
			a.log.Info("configuration key is back to its running value", "key", ch.Key, "value", running)
			continue
		}
		r.pending[ch.Key] = running
		a.log.Warn("configuration key needs a restart, not applied", "key", ch.Key, "running", running, "file", ch.New)
	}
	cfg := rl.Config
	for key, running := range r.pending {
		cfg = keepRunning(a, cfg, key, running)
	}
	r.inForce.Store(cfg)
	if len(rl.Applied) == 0 {
		return
	}
	for _, ch := range rl.Applied {
		a.log.Info("configuration key reloaded", "key", ch.Key, "old", ch.Old, "new", ch.New)
	}
	opts := SchedulerOptions(cfg)
	if a.cfg.Options.ActiveWorkers.Enabled {
		// slotmanager.number-of-slots.max of an active driver: the core keeps the rest.
		if aw, err := ActiveWorkerOptions(cfg); err != nil {
			a.log.Error("reloaded configuration: keeping the current maximum of TaskManagers", "err", err)
			opts.ActiveWorkers.Enabled = false // the core keeps what it has
		} else {
			opts.ActiveWorkers = aw
		}
	}
	if err := opts.Validate(); err != nil {
		a.log.Error("reloaded configuration does not give valid scheduler options; keeping the current ones", "err", err)
	} else {
		a.step(core.UpdateOptions{Options: opts})
	}
	a.reloadCheckpointing(cfg)
	a.reloadBufferTimeout(rl, cfg)
}

// keepRunning sets one restart-only key of cfg back to the value the AM runs with. Unknown
// keys, secrets and keys that had no value are left as the file says: nothing reads them
// while the job runs.
func keepRunning(a *AM, cfg *conf.Config, key, running string) *conf.Config {
	if _, known := conf.Lookup(key); !known || running == "" || running == "******" {
		return cfg
	}
	reverted, err := cfg.With(key, running)
	if err != nil {
		a.log.Warn("cannot show the running value of a restart-only key", "key", key, "running", running, "err", err)
		return cfg
	}
	return reverted
}

// reloadCheckpointing applies execution.checkpointing.{interval,timeout,min-pause} and
// state.checkpoints.num-retained to the checkpoint coordinator (loop goroutine).
func (a *AM) reloadCheckpointing(cfg *conf.Config) {
	c := a.ckpt
	interval, _ := conf.CheckpointingInterval.Lookup(cfg)
	ccfg := c.co.Config()
	ccfg.Timeout = conf.CheckpointingTimeout.Get(cfg)
	ccfg.MinPause = conf.CheckpointingMinPause.Get(cfg)
	ccfg.NumRetained = conf.CheckpointsNumRetained.Get(cfg)
	if ccfg != c.co.Config() {
		discard, err := c.co.SetConfig(ccfg)
		if err != nil {
			a.log.Error("checkpoint settings reload refused; keeping the current ones", "err", err)
		} else {
			c.timeout = ccfg.Timeout
			for _, id := range discard {
				delete(c.coord, id)
				c.discard(id)
			}
		}
	}
	if interval == c.interval {
		return
	}
	old := c.interval
	c.interval = interval
	c.timerGen++ // the trigger timer armed for the old interval is stale now
	switch {
	case interval <= 0:
		a.log.Info("periodic checkpoints turned off", "was", old)
	case c.store == nil:
		a.log.Warn("execution.checkpointing.interval set but state.checkpoints.dir is not: no checkpoints", "interval", interval)
	case c.running:
		c.arm(interval)
	}
}

// ConfigInForce returns the configuration the AM runs with, reloads included (restart-only
// keys keep their start-up value), for GET /jobmanager/config. Safe from any goroutine.
func (a *AM) ConfigInForce() map[string]string {
	if a.reload == nil {
		return maps.Clone(a.cfg.Conf)
	}
	return a.reload.inForce.Load().Map()
}

// ReloadStats returns the counts of accepted and rejected configuration changes (zero when
// live reload is off); the metrics expose them. Safe from any goroutine.
func (a *AM) ReloadStats() ReloadStats {
	if a.reload == nil {
		return ReloadStats{}
	}
	s := a.reload.watcher.Stats()
	return ReloadStats{Reloads: s.Reloads, Failures: s.Failures}
}
