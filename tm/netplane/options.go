package netplane

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/tidestream/tide/internal/clusterauth"
)

// Defaults applied by Listen to zero-valued Options fields. They follow Flink's
// network stack: 32 KiB memory segments, two exclusive buffers per channel, eight
// floating buffers per input gate and a 100 ms buffer timeout (execution.buffer-timeout).
const (
	DefaultBufferBytes            = 32 << 10
	DefaultCreditsPerChannel      = 2
	DefaultFloatingBuffersPerGate = 8
	DefaultFlushInterval          = 100 * time.Millisecond
	DefaultBatchBytes             = 64 << 10

	// MaxRecordBytes bounds a single record. A record larger than BufferBytes
	// travels alone in an oversized buffer that still costs one credit.
	MaxRecordBytes = 16 << 20
)

// Options configure a Plane.
type Options struct {
	// BatchBytes is the size of the per-connection write batch: frames queued
	// for one peer are coalesced into socket writes of up to this many bytes.
	BatchBytes int
	// FlushInterval is how long a partly filled buffer may wait before it is
	// sent (Flink's execution.buffer-timeout): the clock starts with the first record
	// written into an empty buffer. Zero selects DefaultFlushInterval, unless
	// FlushEveryRecord is set; a negative value disables timed flushing (buffers then
	// leave when full or on an explicit Flush).
	FlushInterval time.Duration
	// FlushEveryRecord sends every record as soon as a credit allows (execution.buffer-timeout
	// 0): lowest latency. Records written while the consumer has no credit still gather in
	// the buffer and leave together with the next credit. Overrides FlushInterval.
	FlushEveryRecord bool
	// CreditsPerChannel is the number of receive buffers a consumer grants
	// each channel (taskmanager.network.memory.buffers-per-channel); a producer
	// holds at most this many buffers in flight, plus the channel's share of its
	// gate's floating buffers.
	CreditsPerChannel int
	// FloatingBuffersPerGate are the receive buffers an input gate (the channels
	// of one consumer subtask from every producer of one edge, OpenGateInput) has
	// beyond CreditsPerChannel per channel
	// (taskmanager.network.memory.floating-buffers-per-gate). They are split
	// evenly over the gate's channels when the gate opens (Flink hands them to
	// channels with a backlog instead); a gate holds at most
	// channels × CreditsPerChannel + FloatingBuffersPerGate buffers either way.
	// Zero selects DefaultFloatingBuffersPerGate, a negative value none.
	FloatingBuffersPerGate int
	// BufferBytes is the size of one network buffer, the unit of credit.
	BufferBytes int
	// Logger receives connection-level events; nil uses slog.Default().
	Logger *slog.Logger
	// Secret is the internal secret: when set, every connection proves it both ways in the
	// handshake and a peer without it is refused. Listen refuses an address off loopback
	// without one.
	Secret clusterauth.Secret
}

// withDefaults returns o with zero fields replaced by defaults, or an error
// naming the first field that is out of range.
func (o Options) withDefaults() (Options, error) {
	if o.BufferBytes == 0 {
		o.BufferBytes = DefaultBufferBytes
	}
	if o.CreditsPerChannel == 0 {
		o.CreditsPerChannel = DefaultCreditsPerChannel
	}
	switch {
	case o.FloatingBuffersPerGate == 0:
		o.FloatingBuffersPerGate = DefaultFloatingBuffersPerGate
	case o.FloatingBuffersPerGate < 0:
		o.FloatingBuffersPerGate = 0
	}
	switch {
	case o.FlushEveryRecord:
		o.FlushInterval = 0
	case o.FlushInterval == 0:
		o.FlushInterval = DefaultFlushInterval
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.BufferBytes < 64 || o.BufferBytes > MaxRecordBytes:
		return o, fmt.Errorf("netplane: BufferBytes %d: expected between 64 and %d", o.BufferBytes, MaxRecordBytes)
	case o.CreditsPerChannel < 1 || o.CreditsPerChannel > 1<<16:
		return o, fmt.Errorf("netplane: CreditsPerChannel %d: expected between 1 and 65536", o.CreditsPerChannel)
	case o.FloatingBuffersPerGate > 1<<16:
		return o, fmt.Errorf("netplane: FloatingBuffersPerGate %d: expected at most 65536", o.FloatingBuffersPerGate)
	case o.BatchBytes < 512:
		return o, fmt.Errorf("netplane: BatchBytes %d: expected at least 512", o.BatchBytes)
	}
	return o, nil
}

// WithBufferTimeout returns o set for Flink's execution.buffer-timeout d: 0 sends every
// record at once, a negative d only full buffers, a positive d partly filled buffers d
// after their first record.
func (o Options) WithBufferTimeout(d time.Duration) Options {
	o.FlushEveryRecord = d == 0
	o.FlushInterval = d
	return o
}
