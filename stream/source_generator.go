package stream

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// Generator is a deterministic source: Partitions independent partitions, each a sequence
// of records produced by Next from the partition's own state. A partition is a split, so its
// progress (sequence number and state) is checkpointed and moves on rescale.
type Generator[T any] struct {
	Partitions int
	// PerPartition is the number of records per partition (0: unbounded).
	PerPartition int64
	// Rate limits each reader to this many records per second (0: unlimited).
	Rate float64
	// Next returns record seq of the partition, its event timestamp, and the partition's
	// next state (nil state for seq 0). It must be a pure function of its arguments.
	Next func(partition int, seq int64, state []byte) (v T, ts int64, next []byte)
}

// GeneratorSource adds a generator source.
func GeneratorSource[T any](j *Job, name string, g Generator[T], wm WatermarkStrategy[T]) DataStream[T] {
	if g.Partitions < 1 || g.Next == nil {
		j.fail(fmt.Errorf("job %q, generator %q: want Partitions >= 1 and a Next function", j.name, name))
	}
	return FromSource(j, name, g, wm)
}

type genSplit struct {
	id        string
	partition int
	seq       int64
	state     []byte
}

func (s genSplit) encode() Split {
	b := binary.AppendUvarint(nil, uint64(s.partition))
	b = binary.AppendVarint(b, s.seq)
	b = append(b, s.state...)
	return Split{ID: s.id, Data: b}
}

func decodeGenSplit(sp Split) (genSplit, error) {
	d := NewDecoder(sp.Data)
	p := d.Uvarint()
	seq := d.Varint()
	if d.Err() != nil {
		return genSplit{}, fmt.Errorf("decoding generator split %q: %w", sp.ID, d.Err())
	}
	return genSplit{id: sp.ID, partition: int(p), seq: seq, state: slices.Clone(sp.Data[len(sp.Data)-d.Remaining():])}, nil
}

// CreateEnumerator hands out one split per partition.
func (g Generator[T]) CreateEnumerator(restored []byte, _ int) (SplitEnumerator, error) {
	splits := make([]Split, 0, g.Partitions)
	for p := range g.Partitions {
		splits = append(splits, genSplit{id: fmt.Sprintf("partition-%d", p), partition: p}.encode())
	}
	return NewQueueEnumerator(splits, restored)
}

// CreateReader reads partitions. A reader asks for partitions until it holds its share
// (share) or is told there are no more, and generates from all it owns, round robin.
func (g Generator[T]) CreateReader(rc ReaderContext) (SourceReader, error) {
	return &genReader[T]{g: g, rc: rc, limiter: newRateLimiter(g.Rate)}, nil
}

type genReader[T any] struct {
	g       Generator[T]
	rc      ReaderContext
	splits  []genSplit
	next    int
	noMore  bool
	waiting bool
	limiter *rateLimiter
}

func (r *genReader[T]) Start(context.Context) error {
	r.request()
	return nil
}

// request asks for a partition while the reader holds fewer than its share, or none: a
// reader whose partitions have ended asks to hear "no more".
func (r *genReader[T]) request() {
	if !r.waiting && !r.noMore && (len(r.splits) == 0 || len(r.splits) < r.share()) {
		r.waiting = true
		r.rc.RequestSplit()
	}
}

// share is the reader's part of the partitions: Partitions/Parallelism, one more for the
// first Partitions%Parallelism subtasks. Without it, the reader that starts first would
// take partitions a reader starting a moment later would read, and an unbounded
// generator's partitions never end to even that out. It does not ask ahead
// (RequestSplitAhead): the AM keeps the last splits back from such requests until the
// reader finishes one, which an unbounded partition never does.
func (r *genReader[T]) share() int {
	p := max(r.rc.Parallelism, 1)
	n := r.g.Partitions / p
	if r.rc.Subtask < r.g.Partitions%p {
		n++
	}
	return n
}

func (r *genReader[T]) AddSplits(splits []Split) {
	r.waiting = false
	for _, sp := range splits {
		s, err := decodeGenSplit(sp)
		if err != nil {
			panic(err) // splits come from our own enumerator; a bad one is a bug
		}
		r.splits = append(r.splits, s)
	}
	r.request() // keep pulling up to the share
}

func (r *genReader[T]) NotifyNoMoreSplits() { r.noMore, r.waiting = true, false }

func (r *genReader[T]) Poll(_ context.Context, out Collector) (InputStatus, error) {
	if len(r.splits) == 0 {
		if r.noMore {
			return EndOfInput, nil
		}
		r.request()
		return NothingAvailable, nil
	}
	budget := r.limiter.allow(time.Now(), 256)
	if budget == 0 {
		return NothingAvailable, nil
	}
	for ; budget > 0 && len(r.splits) > 0; budget-- {
		r.next %= len(r.splits)
		s := &r.splits[r.next]
		if r.g.PerPartition > 0 && s.seq >= r.g.PerPartition {
			r.splits = slices.Delete(r.splits, r.next, r.next+1)
			continue
		}
		v, ts, st := r.g.Next(s.partition, s.seq, s.state)
		s.seq++
		s.state = st
		r.next++
		r.limiter.took(1)
		if err := out.Collect(v, ts); err != nil {
			return NothingAvailable, err
		}
	}
	return MoreAvailable, nil
}

func (r *genReader[T]) SnapshotState(int64) ([]Split, error) {
	out := make([]Split, 0, len(r.splits))
	for _, s := range r.splits {
		out = append(out, s.encode())
	}
	return out, nil
}

func (r *genReader[T]) Close() error { return nil }

// SplitLag reports the records left in each partition of a bounded generator; an unbounded
// one has no end to lag behind.
func (r *genReader[T]) SplitLag() []SplitLag {
	if r.g.PerPartition <= 0 {
		return nil
	}
	out := make([]SplitLag, 0, len(r.splits))
	for _, s := range r.splits {
		out = append(out, SplitLag{Split: s.id, Records: max(0, r.g.PerPartition-s.seq)})
	}
	return out
}
