package checkpoint

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidConfig is wrapped by every Config.Validate error.
var ErrInvalidConfig = errors.New("invalid checkpoint configuration")

// Config holds the coordinator's settings (Flink's keys in brackets).
type Config struct {
	// Timeout aborts a checkpoint not complete after this long
	// [execution.checkpointing.timeout, default 10 min].
	Timeout time.Duration
	// MinPause is the least time between the end of one checkpoint and the trigger of
	// the next [execution.checkpointing.min-pause, default 0].
	MinPause time.Duration
	// NumRetained is how many completed checkpoints are kept
	// [state.checkpoints.num-retained, default 1].
	NumRetained int
	// HistorySize bounds the checkpoint history shown by REST
	// [web.checkpoints.history, default 10].
	HistorySize int
}

// DefaultConfig returns Flink's defaults.
func DefaultConfig() Config {
	return Config{Timeout: 10 * time.Minute, MinPause: 0, NumRetained: 1, HistorySize: 10}
}

// Validate reports every invalid field.
func (c Config) Validate() error {
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("%w: execution.checkpointing.timeout %s: expected > 0", ErrInvalidConfig, c.Timeout))
	}
	if c.MinPause < 0 {
		errs = append(errs, fmt.Errorf("%w: execution.checkpointing.min-pause %s: expected ≥ 0", ErrInvalidConfig, c.MinPause))
	}
	if c.NumRetained < 1 {
		errs = append(errs, fmt.Errorf("%w: state.checkpoints.num-retained %d: expected ≥ 1", ErrInvalidConfig, c.NumRetained))
	}
	if c.HistorySize < 0 {
		errs = append(errs, fmt.Errorf("%w: web.checkpoints.history %d: expected ≥ 0", ErrInvalidConfig, c.HistorySize))
	}
	return errors.Join(errs...)
}
