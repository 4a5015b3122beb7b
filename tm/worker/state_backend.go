package worker

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	tconf "github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/localstate"
)

const (
	stateBackendTypeKey = "state.backend.type"
	pebbleLocalDirKey   = "state.backend.pebble.localdir"
	// incrementalKey is Flink's execution.checkpointing.incremental: pebble checkpoints
	// upload only the tables checkpoint storage does not hold yet.
	incrementalKey = "execution.checkpointing.incremental"
	// localRecoveryKey is Flink's state.backend.local-recovery: keep the last completed
	// checkpoint's files on the TaskManager and restore from them.
	localRecoveryKey = "state.backend.local-recovery"
	// localRootKey is Flink's taskmanager.state.local.root-dirs (one directory here).
	localRootKey = "taskmanager.state.local.root-dirs"
)

// stateBackendConfig reads state.backend.* from the job's configuration. Flink's "rocksdb"
// selects pebble and says so in the log.
func stateBackendConfig(conf map[string]string, log *slog.Logger) (exec.StateBackendConfig, error) {
	raw := conf[stateBackendTypeKey]
	t, alias, err := state.ParseType(raw)
	if err != nil {
		return exec.StateBackendConfig{}, err
	}
	if alias {
		log.Info("state.backend.type: rocksdb is an alias: keyed state goes to the pebble backend (an embedded LSM like RocksDB)", "configured", raw, "backend", t)
	}
	cfg := exec.StateBackendConfig{Type: t, Dir: conf[pebbleLocalDirKey], LocalDir: conf[localRootKey]}
	for key, dst := range map[string]*bool{incrementalKey: &cfg.Incremental, localRecoveryKey: &cfg.LocalRecovery} {
		raw := strings.TrimSpace(conf[key])
		if raw == "" {
			continue
		}
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return exec.StateBackendConfig{}, fmt.Errorf("%s: %q is not a boolean (true or false)", key, raw)
		}
		*dst = v
	}
	if cfg.UploadNice, err = uploadNice(conf); err != nil {
		return exec.StateBackendConfig{}, err
	}
	return cfg, nil
}

// uploadNice is the job's state.backend.upload.nice (its default when unset), checked as
// the AM checks it: a value outside 0..19 is an error naming the key and the range.
func uploadNice(amConf map[string]string) (int, error) {
	key := tconf.StateBackendUploadNice.Key()
	c := tconf.Defaults()
	if raw, ok := amConf[key]; ok {
		var err error
		if c, err = c.With(key, raw); err != nil {
			return 0, fmt.Errorf("the AM's configuration: %w", err)
		}
	}
	return tconf.StateBackendUploadNice.Get(c), nil
}

// localStateStore returns the TaskManager's local state store when the job asks for local
// recovery: a directory of this process's own (localstate.OpenNew) under
// taskmanager.state.local.root-dirs, else under state.backend.pebble.localdir (or the temp
// dir), opened once per root and kept for the process's life, so the subtasks of a job
// that comes back (a new AM of the same job) find what they had. The TaskManager ids
// repeat (every local run names them tm-1, tm-2, ...), so the directory is never shared
// with another TaskManager; those left by dead ones go when the next one opens its
// store. A store that cannot open only costs local recovery.
func (w *worker) localStateStore(cfg exec.StateBackendConfig, log *slog.Logger) *localstate.Store {
	if !cfg.LocalRecovery {
		return nil
	}
	root := cfg.LocalDir
	if root == "" {
		root = cfg.Dir
	}
	if root == "" {
		root = os.TempDir()
	}
	root = filepath.Clean(root)
	if ls, ok := w.localStores[root]; ok {
		return ls
	}
	ls, err := localstate.OpenNew(root, w.cfg.ID, log)
	if err != nil {
		log.Warn("local recovery off: the local state store does not open", "root", root, "err", err)
		return nil
	}
	log.Info("local recovery on", "dir", ls.Dir())
	if w.localStores == nil {
		w.localStores = map[string]*localstate.Store{}
	}
	w.localStores[root] = ls
	return ls
}

// deleteLocalStores removes the process's local state directories when the TaskManager
// stops: no other process ever uses them.
func (w *worker) deleteLocalStores() {
	for root, ls := range w.localStores {
		if err := ls.Delete(); err != nil {
			w.log.Warn("removing the local state directory", "dir", ls.Dir(), "err", err)
		}
		delete(w.localStores, root)
	}
}
