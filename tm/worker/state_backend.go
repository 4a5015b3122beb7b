package worker

import (
	"log/slog"

	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/tm/exec"
)

const (
	stateBackendTypeKey = "state.backend.type"
	pebbleLocalDirKey   = "state.backend.pebble.localdir"
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
	return exec.StateBackendConfig{Type: t, Dir: conf[pebbleLocalDirKey]}, nil
}
