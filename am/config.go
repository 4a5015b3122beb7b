package am

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
)

// Config is everything one AM needs. cmd/tide builds it from flink-conf.yaml and flags
// (see FromConf); tests build it directly.
type Config struct {
	// JobID names the job in checkpoint paths and REST (32 hex digits, Flink's format).
	JobID   string
	JobName string
	JobArgs []string
	Job     *stream.Job

	// Options configure the core scheduler.
	Options core.Options
	// Conf is the effective flat configuration, shipped to every TaskManager.
	Conf map[string]string

	// Storage holds checkpoints; nil disables checkpointing.
	Storage            storage.Storage
	CheckpointInterval time.Duration // 0 disables periodic checkpoints
	CheckpointTimeout  time.Duration
	NumRetained        int
	// CheckpointRetention is execution.checkpointing.externalized-checkpoint-retention: which
	// checkpoints outlive the job ("" is DELETE_ON_CANCELLATION).
	CheckpointRetention string
	// FromSavepoint is a savepoint (or retained checkpoint) directory, hdfs://, file:// or an
	// absolute path, that the job starts from when Storage holds no complete checkpoint of
	// it yet (--fromSavepoint); "" starts fresh.
	FromSavepoint string
	// AllowNonRestoredState lets the job start from a savepoint holding state of vertices
	// it no longer has; that state is dropped (--allowNonRestoredState).
	AllowNonRestoredState bool

	// Watch turns on live reload of flink-conf.yaml (see reload.go); zero: off.
	Watch ConfigWatch

	// Driver is the resource manager driver; nil means standalone.
	Driver drivers.Driver
	// HandOffOnStop: when Run's context ends (SIGTERM), the AM leaves as a crashed one would
	// when task adoption is on (Options.AdoptTimeout > 0): it cancels no subtask and tells
	// no TaskManager to go, so the next AM, which the cluster starts (a Kubernetes
	// Deployment replacing a deleted or evicted AM pod), adopts them still running.
	HandOffOnStop bool
	// ExpectedTaskManagers names TaskManagers started together with the AM (tide run
	// --target local): the first deployment waits for them, bounded by the submission
	// stabilization timeout, instead of deploying on the first one.
	ExpectedTaskManagers []core.TaskManagerID
	HeartbeatInterval    time.Duration

	Clock  Clock
	Logger *slog.Logger

	// RPCListener serves TaskManagers (gRPC); RESTListener serves the REST API (nil: none).
	RPCListener  net.Listener
	RESTListener net.Listener
	// RESTAuthToken (rest.auth.token) or the first line of RESTAuthTokenFile
	// (rest.auth.token-file) is the bearer token mutating REST calls must carry; one is
	// required when RESTListener is not on a loopback address.
	RESTAuthToken     string
	RESTAuthTokenFile string
	// RESTShutdownGrace (rest.shutdown.grace-period) bounds how long the REST API stays up,
	// read-only, after the job ended, for clients to read the results they wait for (a
	// stop-with-savepoint's); 0: it closes with the job (see rest_linger.go).
	RESTShutdownGrace time.Duration
	// InternalSecret (security.internal.secret-file, security.internal.secret, or the YARN
	// container's credentials) authenticates TaskManagers: required when RPCListener is not
	// on a loopback address, used whenever set (see internal/clusterauth).
	InternalSecret clusterauth.Secret
}

func (c *Config) validate() error {
	var errs []error
	if c.JobID == "" {
		errs = append(errs, errors.New("job id is empty"))
	}
	if c.Job == nil {
		errs = append(errs, fmt.Errorf("job %q: no job built", c.JobName))
	}
	if c.RPCListener == nil {
		errs = append(errs, errors.New("no RPC listener"))
	}
	if c.Storage != nil && c.NumRetained < 1 {
		errs = append(errs, fmt.Errorf("state.checkpoints.num-retained = %d: expected at least 1", c.NumRetained))
	}
	return errors.Join(errs...)
}

func (c *Config) withDefaults() {
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 10 * time.Second
	}
	if c.CheckpointTimeout <= 0 {
		c.CheckpointTimeout = 10 * time.Minute
	}
	if c.NumRetained <= 0 {
		c.NumRetained = 1
	}
	// Standalone cannot start a TaskManager again: the AM never ends one. (Active drivers
	// such as YARN admit TaskManagers too, so being an Admitter does not tell.)
	if _, standaloneDriver := c.Driver.(*standalone.Driver); c.Driver == nil || standaloneDriver {
		c.Options.KeepTaskManagers = true
	}
}
