package stream

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
)

// QueueEnumerator hands out a fixed set of splits one per request, in ID order, and
// answers "no more" once they are gone (Flink's IteratorSourceEnumerator). Its state is
// the list of unassigned splits. Guided makes a request take a share of what is left.
type QueueEnumerator struct {
	remaining []Split
	readers   int // Guided's parallelism; 0: one split per request
}

// guidedShare: under Guided, a request takes 1/(guidedShare × parallelism) of the splits
// left, at least one.
const guidedShare = 4

// Guided makes each request take max(1, remaining/(4×parallelism)) splits instead of one
// (OpenMP's guided schedule): a source of many small splits then needs a few dozen
// assignments rather than one per split, each of which waits for the AM's durable split
// assignment log, while the last 4×parallelism splits still go one at a time, so the
// readers end within about one split of each other. It returns e.
func (e *QueueEnumerator) Guided(parallelism int) *QueueEnumerator {
	e.readers = max(parallelism, 0)
	return e
}

// NewQueueEnumerator starts with splits, or with the restored state when it is not nil.
func NewQueueEnumerator(splits []Split, restored []byte) (*QueueEnumerator, error) {
	if restored != nil {
		rs, err := DecodeSplits(restored)
		if err != nil {
			return nil, fmt.Errorf("restoring split enumerator: %w", err)
		}
		splits = rs
	}
	e := &QueueEnumerator{remaining: slices.Clone(splits)}
	e.sort()
	return e, nil
}

func (e *QueueEnumerator) sort() {
	slices.SortFunc(e.remaining, func(a, b Split) int { return CompareIDs(a.ID, b.ID) })
}

// Start does nothing: splits are assigned on request only.
func (e *QueueEnumerator) Start(context.Context) error { return nil }

// HandleSplitRequest gives the requester the next split (under Guided, the next share).
func (e *QueueEnumerator) HandleSplitRequest(int) ([]Split, bool) {
	if len(e.remaining) == 0 {
		return nil, true
	}
	n := 1
	if e.readers > 0 {
		n = max(1, len(e.remaining)/(guidedShare*e.readers))
	}
	out := slices.Clone(e.remaining[:n])
	e.remaining = e.remaining[n:]
	return out, false
}

// AddReader does nothing (lazy pull).
func (e *QueueEnumerator) AddReader(int) {}

// AddSplitsBack queues the splits again.
func (e *QueueEnumerator) AddSplitsBack(splits []Split, _ int) {
	e.remaining = append(e.remaining, splits...)
	e.sort()
}

// Remaining is the number of unassigned splits.
func (e *QueueEnumerator) Remaining() int { return len(e.remaining) }

// SnapshotState encodes the unassigned splits.
func (e *QueueEnumerator) SnapshotState(int64) ([]byte, error) { return EncodeSplits(e.remaining), nil }

// NotifyCheckpointComplete does nothing.
func (e *QueueEnumerator) NotifyCheckpointComplete(int64) {}

// EncodeSplits encodes a split list (enumerator and reader state).
func EncodeSplits(splits []Split) []byte {
	b := binary.AppendUvarint(nil, uint64(len(splits)))
	for _, s := range splits {
		b = AppendString(b, s.ID)
		b = binary.AppendUvarint(b, uint64(len(s.Data)))
		b = append(b, s.Data...)
	}
	return b
}

// DecodeSplits decodes what EncodeSplits wrote.
func DecodeSplits(b []byte) ([]Split, error) {
	d := NewDecoder(b)
	n := d.Uvarint()
	if d.Err() == nil && n > uint64(len(b)) {
		return nil, fmt.Errorf("decoding split list: %d splits in %d bytes: %w", n, len(b), ErrShortBuffer)
	}
	splits := make([]Split, 0, n)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		id := d.String()
		data := d.Bytes()
		splits = append(splits, Split{ID: id, Data: slices.Clone(data)})
	}
	if d.Err() != nil {
		return nil, fmt.Errorf("decoding split list: %w", d.Err())
	}
	if d.Remaining() != 0 {
		return nil, fmt.Errorf("decoding split list: %d trailing bytes", d.Remaining())
	}
	return splits, nil
}

// CompareIDs orders split and list-state ids by length first, so "split-10" sorts after
// "split-9"; restores redistribute items in this order.
func CompareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SortSplits sorts splits in the order used for deterministic redistribution.
func SortSplits(splits []Split) {
	slices.SortFunc(splits, func(a, b Split) int { return CompareIDs(a.ID, b.ID) })
}
