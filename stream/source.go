package stream

import (
	"context"
)

// Split is one unit of source work (a number range, a file, a generator partition).
// Data carries the split's description and, in checkpoints, its progress.
type Split struct {
	ID   string
	Data []byte
}

// SplitEnumerator runs in the AM's source coordinator (FLIP-27). Calls come from one
// goroutine. Splits already handed out are not part of its state: at a checkpoint every
// split is either in the enumerator's state or in exactly one reader's state.
type SplitEnumerator interface {
	Start(ctx context.Context) error
	// HandleSplitRequest answers a reader's request: splits to assign (possibly none) and
	// whether the reader will never get more.
	HandleSplitRequest(subtask int) (splits []Split, noMore bool)
	AddReader(subtask int)
	// AddSplitsBack returns splits assigned to a reader after the checkpoint it restores from.
	AddSplitsBack(splits []Split, subtask int)
	SnapshotState(checkpointID int64) ([]byte, error)
	NotifyCheckpointComplete(checkpointID int64)
}

// ReaderContext connects a reader to its subtask.
type ReaderContext struct {
	Subtask     int
	Parallelism int
	// RequestSplit asks the enumerator for more splits; the answer arrives through
	// SourceReader.AddSplits or NotifyNoMoreSplits.
	RequestSplit func()
	// RequestSplitAhead asks for more splits while the reader still has a split to read,
	// so that the answer arrives before it runs out. The AM may answer it with AddSplits of
	// no splits: it keeps a source's last splits, as many as its other readers, for readers
	// with nothing to read. The reader then asks again with RequestSplit once it runs out.
	// Nil: RequestSplit.
	RequestSplitAhead func()
}

// requestAhead calls RequestSplitAhead, or RequestSplit where there is none.
func (rc ReaderContext) requestAhead() {
	if rc.RequestSplitAhead != nil {
		rc.RequestSplitAhead()
		return
	}
	rc.RequestSplit()
}

// InputStatus is what a Poll reports.
type InputStatus uint8

const (
	// MoreAvailable: call Poll again at once.
	MoreAvailable InputStatus = iota
	// NothingAvailable: nothing to emit now (waiting for splits or a rate limit).
	NothingAvailable
	// EndOfInput: every split is done and no more will come.
	EndOfInput
)

// SourceReader reads the splits of one source subtask. Calls come from one goroutine.
type SourceReader interface {
	// Start is called once; readers without splits typically request one here.
	Start(ctx context.Context) error
	// AddSplits hands the reader splits; none answers a RequestSplitAhead that got nothing.
	AddSplits(splits []Split)
	NotifyNoMoreSplits()
	// Poll emits a bounded number of records and returns without blocking. The records it
	// emits may be held back until it returned (StagedCollector).
	Poll(ctx context.Context, out Collector) (InputStatus, error)
	// SnapshotState returns every split the reader owns, with its current progress.
	SnapshotState(checkpointID int64) ([]Split, error)
	Close() error
}

// SplitSource is a FLIP-27 source: an enumerator factory for the AM and a reader factory
// for the TaskManagers.
type SplitSource interface {
	// CreateEnumerator builds the enumerator; restored is its checkpointed state or nil.
	CreateEnumerator(restored []byte, parallelism int) (SplitEnumerator, error)
	CreateReader(rc ReaderContext) (SourceReader, error)
}
