package worker

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	return cfg, nil
}

// openLocalState opens the TaskManager's local state store when the job asks for local
// recovery: taskmanager.state.local.root-dirs, else tide-localstate-<TaskManager id> under
// state.backend.pebble.localdir (or the temp dir). The directory outlives a session with
// the AM, so a TaskManager that re-registers keeps what it had. A store that cannot open
// only costs local recovery.
func openLocalState(cfg exec.StateBackendConfig, tmID string, log *slog.Logger) *localstate.Store {
	if !cfg.LocalRecovery {
		return nil
	}
	dir := cfg.LocalDir
	if dir == "" {
		base := cfg.Dir
		if base == "" {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "tide-localstate-"+url.PathEscape(tmID))
	}
	ls, err := localstate.Open(dir, log)
	if err != nil {
		log.Warn("local recovery off: the local state store does not open", "dir", dir, "err", err)
		return nil
	}
	log.Info("local recovery on", "dir", dir)
	return ls
}
