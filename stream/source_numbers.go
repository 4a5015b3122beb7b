package stream

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// NumberSequence is a bounded source of the int64 numbers from..to (inclusive), split into
// contiguous ranges. With a rate (records per second per reader, 0 = unlimited) it runs
// slowly enough for tests to rescale and kill mid-run.
type NumberSequence struct {
	From, To int64
	// Splits is the number of ranges (0: 4 per reader of the first run, at least 1).
	Splits int
	Rate   float64
}

// NumberSequenceSource adds a NumberSequence source emitting int64 records.
func NumberSequenceSource(j *Job, name string, src NumberSequence) DataStream[int64] {
	if src.To < src.From {
		j.fail(fmt.Errorf("job %q, source %q: range %d..%d is empty", j.name, name, src.From, src.To))
	}
	return FromSource(j, name, src, NoWatermarks[int64]())
}

// numberSplit is a range [next, to] still to emit.
type numberSplit struct {
	id       string
	next, to int64
}

func (s numberSplit) encode() Split {
	b := binary.AppendVarint(nil, s.next)
	b = binary.AppendVarint(b, s.to)
	return Split{ID: s.id, Data: b}
}

func decodeNumberSplit(sp Split) (numberSplit, error) {
	d := NewDecoder(sp.Data)
	s := numberSplit{id: sp.ID, next: d.Varint(), to: d.Varint()}
	if d.Err() != nil {
		return s, fmt.Errorf("decoding number split %q: %w", sp.ID, d.Err())
	}
	return s, nil
}

// CreateEnumerator splits the range.
func (n NumberSequence) CreateEnumerator(restored []byte, parallelism int) (SplitEnumerator, error) {
	count := n.Splits
	if count <= 0 {
		count = max(1, 4*parallelism)
	}
	total := n.To - n.From + 1
	if int64(count) > total {
		count = int(max(total, 1))
	}
	var splits []Split
	for i := range count {
		lo := n.From + total*int64(i)/int64(count)
		hi := n.From + total*int64(i+1)/int64(count) - 1
		splits = append(splits, numberSplit{id: fmt.Sprintf("range-%d", i), next: lo, to: hi}.encode())
	}
	return NewQueueEnumerator(splits, restored)
}

// CreateReader reads ranges.
func (n NumberSequence) CreateReader(rc ReaderContext) (SourceReader, error) {
	return &numberReader{pull: splitPuller{rc: rc}, limiter: newRateLimiter(n.Rate)}, nil
}

// numberSplitsAhead is how many ranges a number reader holds beyond the one it reads.
const numberSplitsAhead = 1

type numberReader struct {
	pull     splitPuller
	splits   []numberSplit
	limiter  *rateLimiter
	batchMax int
}

func (r *numberReader) Start(context.Context) error {
	r.batchMax = 512
	r.request()
	return nil
}

// request asks for a split while the reader holds fewer than 1+numberSplitsAhead: it
// asks for the next range while it still reads one, so that it keeps reading when the
// answer is slow (the AM failing over: its reader keeps a whole range to read meanwhile).
func (r *numberReader) request() { r.pull.request(len(r.splits), numberSplitsAhead) }

func (r *numberReader) AddSplits(splits []Split) {
	r.pull.added(len(splits))
	for _, sp := range splits {
		s, err := decodeNumberSplit(sp)
		if err != nil {
			panic(err) // splits come from our own enumerator; a bad one is a bug
		}
		r.splits = append(r.splits, s)
	}
}

func (r *numberReader) NotifyNoMoreSplits() { r.pull.ended() }

func (r *numberReader) Poll(_ context.Context, out Collector) (InputStatus, error) {
	r.request()
	if len(r.splits) == 0 {
		if r.pull.noMore {
			return EndOfInput, nil
		}
		r.request()
		return NothingAvailable, nil
	}
	budget := r.limiter.allow(time.Now(), r.batchMax)
	if budget == 0 {
		return NothingAvailable, nil
	}
	s := &r.splits[0]
	for ; budget > 0 && s.next <= s.to; budget-- {
		if err := out.Collect(s.next, NoTimestamp); err != nil {
			return NothingAvailable, err
		}
		s.next++
		r.limiter.took(1)
	}
	if s.next > s.to {
		r.splits = r.splits[1:]
		r.pull.finished()
		r.request()
	}
	return MoreAvailable, nil
}

func (r *numberReader) SnapshotState(int64) ([]Split, error) {
	out := make([]Split, 0, len(r.splits))
	for _, s := range r.splits {
		out = append(out, s.encode())
	}
	return out, nil
}

func (r *numberReader) Close() error { return nil }

// SplitLag reports the numbers left in each range.
func (r *numberReader) SplitLag() []SplitLag {
	out := make([]SplitLag, 0, len(r.splits))
	for _, s := range r.splits {
		out = append(out, SplitLag{Split: s.id, Records: max(0, s.to-s.next+1)})
	}
	return out
}

// rateLimiter allows rate records per second on average (0: unlimited).
type rateLimiter struct {
	rate    float64
	start   time.Time
	emitted int64
}

func newRateLimiter(rate float64) *rateLimiter { return &rateLimiter{rate: rate} }

// allow returns how many records may be emitted now, at most max.
func (l *rateLimiter) allow(now time.Time, maxN int) int {
	if l.rate <= 0 {
		return maxN
	}
	if l.start.IsZero() {
		l.start = now
	}
	due := int64(now.Sub(l.start).Seconds()*l.rate) + 1 - l.emitted
	if due <= 0 {
		return 0
	}
	return int(min(due, int64(maxN)))
}

func (l *rateLimiter) took(n int) { l.emitted += int64(n) }
