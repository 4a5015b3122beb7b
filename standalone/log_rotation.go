package standalone

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// keptLogRuns is how many earlier runs' logs a local cluster's log directory keeps per
// process: <name>.log.1 (the last run) to <name>.log.<keptLogRuns>, as Flink keeps
// MAX_LOG_FILE_NUMBER (10) rotated logs of a daemon.
const keptLogRuns = 10

// rotateLogs moves every <name>.log in dir to <name>.log.1, an existing <name>.log.1 to
// .2 and so on, dropping the one past keep, so that the *.log files are the current run's
// only (a cluster started again in the same work directory does not append to the last
// run's logs, nor leave a stale taskmanager-<n>.log of a TaskManager it does not start).
func rotateLogs(dir string, keep int) error {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return fmt.Errorf("local cluster: rotate the logs in %s: %w", dir, err)
	}
	for _, log := range logs {
		if err := rotateLog(log, keep); err != nil {
			return fmt.Errorf("local cluster: rotate %s (an earlier run's log): %w", log, err)
		}
	}
	return nil
}

// rotateLog shifts log, log.1, ..., log.<keep-1> up by one, removing log.<keep>.
func rotateLog(log string, keep int) error {
	gen := func(n int) string {
		if n == 0 {
			return log
		}
		return log + "." + strconv.Itoa(n)
	}
	if err := os.Remove(gen(keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for n := keep - 1; n >= 0; n-- {
		if err := os.Rename(gen(n), gen(n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
