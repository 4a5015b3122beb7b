package stream

import (
	"context"
	"log/slog"
	"math"

	"github.com/tidestream/tide/state"
	"time"
)

// Watermark values. A watermark w promises that no record with timestamp <= w follows.
const (
	MinWatermark int64 = math.MinInt64
	MaxWatermark int64 = math.MaxInt64
	// NoTimestamp marks a record without event time.
	NoTimestamp int64 = math.MinInt64
)

// Collector receives the records an operator emits, with their event timestamps.
type Collector interface {
	Collect(v any, ts int64) error
}

// Runtime describes where one operator instance runs.
type Runtime struct {
	JobID          string
	Vertex         string
	OperatorID     string
	Subtask        int
	Parallelism    int
	MaxParallelism int
	// KeyGroupStart..KeyGroupEnd (inclusive) are the key groups this subtask owns.
	KeyGroupStart, KeyGroupEnd int
	Attempt                    int64
	// RunID names the AM process that deployed the attempt; with Attempt it is unique over
	// the whole life of the job, across AM restarts (empty when a single AM is assumed).
	RunID string
	// CheckpointingEnabled says whether checkpoints run. With checkpointing, a subtask whose
	// input ended keeps taking part in checkpoints and two-phase operators commit their last
	// transaction when the first checkpoint after the end of input completes; without it they
	// commit in EndInput.
	CheckpointingEnabled bool
	// BufferTimeout is execution.buffer-timeout, for sinks that buffer what they emit: 0
	// emit every record at once, negative only when their buffer is full (and at
	// checkpoints and the end of input), positive at most this long after a record.
	BufferTimeout time.Duration
	Logger        *slog.Logger
	// KeyedBackend is the subtask's keyed state backend (state.backend.type), shared by the
	// operators of its chain; nil means the hashmap backend.
	KeyedBackend state.Backend
}

// BufferTimeoutSetter is implemented by operators that buffer what they emit (sinks) to
// follow a change of the job's execution.buffer-timeout while the job runs (live reload). The
// runtime calls it from the subtask's goroutine, like every Operator method; d has the
// meaning of Runtime.BufferTimeout.
type BufferTimeoutSetter interface {
	SetBufferTimeout(d time.Duration) error
}

// OwnsKeyGroup reports whether kg is in this subtask's range.
func (r Runtime) OwnsKeyGroup(kg int) bool { return kg >= r.KeyGroupStart && kg <= r.KeyGroupEnd }

// Operator is one step of a chain. The runtime calls its methods from one goroutine.
type Operator interface {
	// Open prepares the operator; restored is nil for a fresh start.
	Open(ctx context.Context, rt Runtime, restored StateReader) error
	// Process handles one record.
	Process(v any, ts int64, out Collector) error
	// Watermark is called when the input watermark advances, before it is forwarded.
	Watermark(wm int64, out Collector) error
	// Snapshot writes the operator's state for the checkpoint.
	Snapshot(checkpointID int64, w StateWriter) error
	// CheckpointComplete is called when a checkpoint this operator took part in completed.
	CheckpointComplete(ctx context.Context, checkpointID int64) error
	// EndInput is called once when every input has ended (bounded input). With
	// checkpointing enabled the subtask then stays alive until a checkpoint taken after this
	// call completes: Snapshot and CheckpointComplete are still called, so a two-phase
	// operator pre-commits its last transaction in that Snapshot and commits it in
	// CheckpointComplete (see Runtime.CheckpointingEnabled).
	EndInput(ctx context.Context, out Collector) error
	// Close releases resources; called on every exit path.
	Close() error
}

// BaseOperator implements every Operator method as a no-op, for embedding.
type BaseOperator struct{}

func (BaseOperator) Open(context.Context, Runtime, StateReader) error { return nil }
func (BaseOperator) Watermark(int64, Collector) error                 { return nil }
func (BaseOperator) Snapshot(int64, StateWriter) error                { return nil }
func (BaseOperator) CheckpointComplete(context.Context, int64) error  { return nil }
func (BaseOperator) EndInput(context.Context, Collector) error        { return nil }
func (BaseOperator) Close() error                                     { return nil }

// ListItem is one entry of operator list state (a split, a pending commit).
type ListItem struct {
	ID   string
	Data []byte
}

// ListMode says how list state is redistributed when restoring at another parallelism.
type ListMode uint8

const (
	// RoundRobin gives subtask i the items at positions i, i+p, … of all items sorted by ID.
	RoundRobin ListMode = 1
	// Union gives every subtask every item.
	Union ListMode = 2
)

// StateWriter receives an operator's state during a snapshot.
type StateWriter interface {
	// Keyed appends one entry of keyed state in key group kg.
	Keyed(state string, kg int, key, value []byte)
	// List appends one item of operator list state.
	List(state string, mode ListMode, item ListItem)
}

// StateReader gives an operator the state it restores from.
type StateReader interface {
	// Keyed calls fn for every entry of keyed state whose key group this subtask owns.
	// key and value are valid only during the call.
	Keyed(state string, fn func(kg int, key, value []byte) error) error
	// List returns this subtask's share of list state (per the mode it was written with).
	List(state string) []ListItem
}
