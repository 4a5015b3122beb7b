package storage

import (
	"log/slog"
	"time"
)

// Options configures Open. The zero value is usable: defaults are filled in.
type Options struct {
	// Logger receives retry warnings; nil means slog.Default().
	Logger *slog.Logger
	// Retry bounds the retries of transient errors.
	Retry RetryPolicy

	// Namenode overrides the HDFS namenode address(es), "host:port[,host:port]"; otherwise
	// the URI's authority, or fs.defaultFS from $HADOOP_CONF_DIR/core-site.xml.
	Namenode string
	// User overrides the HDFS user; otherwise $HADOOP_USER_NAME, else the OS user.
	User string
	// RPCTimeout bounds each wait for a namenode reply and each connection attempt
	// (default 60 s).
	RPCTimeout time.Duration
	// BufferSize is how many bytes an HDFS writer keeps in memory (default 8 MiB); a bigger
	// file goes to a local spill file in SpillDir. Either way Commit can replay any part of the
	// file after a transient error. Negative means always spill.
	BufferSize int
	// SpillDir is the local directory of HDFS writers' spill files; "" means os.TempDir().
	// Spill files are unlinked as soon as they are created and closed on Commit or Abort.
	SpillDir string
}

// RetryPolicy is an exponential backoff: attempt n waits min(InitialBackoff·2^(n-1),
// MaxBackoff), ±20 % jitter, before trying again.
type RetryPolicy struct {
	Attempts       int           // total tries including the first; default 6
	InitialBackoff time.Duration // default 200 ms
	MaxBackoff     time.Duration // default 5 s
}

const (
	defaultAttempts       = 6
	defaultInitialBackoff = 200 * time.Millisecond
	defaultMaxBackoff     = 5 * time.Second
	defaultRPCTimeout     = 60 * time.Second
	defaultBufferSize     = 8 << 20
)

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Retry = o.Retry.withDefaults()
	if o.RPCTimeout <= 0 {
		o.RPCTimeout = defaultRPCTimeout
	}
	if o.BufferSize == 0 {
		o.BufferSize = defaultBufferSize
	}
	return o
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = defaultAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = defaultInitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = defaultMaxBackoff
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	return p
}

// backoff is the wait before attempt+1 (attempt counts from 1), without jitter.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.InitialBackoff
	for i := 1; i < attempt; i++ {
		d *= 2
		if d >= p.MaxBackoff {
			return p.MaxBackoff
		}
	}
	return d
}
