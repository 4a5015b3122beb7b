package netplane

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Input is the consuming end of one channel. It holds at most credits buffers
// (CreditsPerChannel, plus its share of the gate's floating buffers when opened
// with OpenGateInput): it grants that many credits when its producer attaches
// and one more each time the last record of a buffer is read.
type Input struct {
	id    ChannelID
	plane *Plane

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every state change
	queue       []received    // received buffers not yet read
	cur         []byte        // buffer being read
	curSide     any           // cur's side car (Output.WriteSides), nil if it has none
	pos         int           // read offset in cur
	scratch     []byte        // Next's copy of the record it returned
	bytes       int64         // bytes held in queue and cur
	peak        int64         // high-water mark of bytes
	producer    consumerLink  // nil until the producer attaches
	outstanding int           // credits granted and not yet consumed by a DATA buffer
	credits     int           // buffers this input may hold: its initial grant
	ended       bool          // END received
	err         error
}

// received is a buffer delivered to an Input, with its side car (local channels only).
type received struct {
	buf  []byte
	side any
}

func newInput(p *Plane, id ChannelID) *Input {
	return &Input{id: id, plane: p, changed: make(chan struct{}), credits: p.opts.CreditsPerChannel}
}

// raiseCredits lets the input hold n buffers when it may hold fewer; a producer that
// attached already is granted the difference at once.
func (i *Input) raiseCredits(n int) {
	i.mu.Lock()
	more := n - i.credits
	if more <= 0 {
		i.mu.Unlock()
		return
	}
	i.credits = n
	link := i.producer
	if link == nil || i.err != nil || i.ended {
		i.mu.Unlock()
		return // bind grants them
	}
	i.outstanding += more
	i.mu.Unlock()
	link.grantCredit(more)
}

// ID returns the channel this input reads.
func (i *Input) ID() ChannelID { return i.id }

// Next returns the next record. It blocks until one arrives, the producer
// closes the channel (io.EOF once everything before has been read), the
// channel fails, or ctx is done. The returned slice is valid until the next
// call. A buffer with a side car is an error: its records make sense only with it
// (ReadRecords).
func (i *Input) Next(ctx context.Context) ([]byte, error) {
	var rec []byte
	var sided bool
	err := i.ReadRecords(ctx, func(r []byte, side any) bool {
		if sided = side != nil; sided {
			return false
		}
		// Copied out: the buffer goes back to the producer once its last record was read.
		i.scratch = append(i.scratch[:0], r...)
		rec = i.scratch
		return false
	})
	if err != nil {
		return nil, err
	}
	if sided {
		return nil, fmt.Errorf("netplane: channel %s: Next of a buffer with a side car (read it with ReadRecords)", i.id)
	}
	return rec, nil
}

// awaitLocked waits, with i.mu held, until the buffer being read has an unread record: it
// recycles a finished buffer (its credit counted in credits, which go back to the producer
// before any wait), takes the next queued one, or waits for one. It returns with i.mu still
// held, or with i.mu released and the channel's error, io.EOF (the producer closed the
// channel and everything was read), or ctx's error.
func (i *Input) awaitLocked(ctx context.Context, credits *int) error {
	for {
		if i.err != nil {
			err := i.err
			i.mu.Unlock()
			return err // the credits of buffers recycled meanwhile are moot: the channel failed
		}
		if i.cur != nil {
			if i.pos < len(i.cur) {
				return nil
			}
			i.recycleCurLocked()
			if !i.ended {
				*credits++
				i.outstanding++
			}
			continue
		}
		if len(i.queue) > 0 {
			i.cur, i.curSide, i.pos = i.queue[0].buf, i.queue[0].side, 0
			i.queue[0] = received{}
			i.queue = i.queue[1:]
			continue
		}
		if i.ended {
			i.mu.Unlock()
			return io.EOF
		}
		ch, link := i.changed, i.producer
		i.mu.Unlock()
		if *credits > 0 {
			link.grantCredit(*credits)
			*credits = 0
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("netplane: reading channel %s: %w", i.id, ctx.Err())
		}
		i.mu.Lock()
	}
}

// ReadRecords hands fn the unread records of the buffer being read, in order, with the
// buffer's side car (nil when it has none; see Output.WriteSides), waiting for one to arrive
// (io.EOF once the producer closed the channel and everything before was read; the
// channel's error once it failed; ctx's error). fn runs without the input's lock, which is
// taken once per buffer rather than once per record; rec is valid only during the call, and
// the side car until the buffer's last record was read. fn returning false stops the
// reading after that record: the rest stay for the next call. The buffer and its credit go
// back to the producer once its last record was handed out, after fn returned.
func (i *Input) ReadRecords(ctx context.Context, fn func(rec []byte, side any) bool) error {
	credits := 0
	i.mu.Lock()
	if err := i.awaitLocked(ctx, &credits); err != nil {
		return err
	}
	// Only this goroutine moves cur and pos; a concurrent fail drops cur without recycling
	// it, so the buffer stays valid here whatever happens meanwhile.
	buf, side, pos := i.cur, i.curSide, i.pos
	i.mu.Unlock()
	var err error
	for pos < len(buf) {
		rec, next, perr := nextRecord(buf, pos)
		if perr != nil {
			err = fmt.Errorf("channel %s: %w", i.id, perr)
			break
		}
		pos = next
		if !fn(rec, side) {
			break
		}
	}
	i.mu.Lock()
	if i.err == nil && err == nil {
		i.pos = pos
		if pos == len(buf) {
			i.recycleCurLocked()
			if !i.ended {
				credits++
				i.outstanding++
			}
		}
	}
	link := i.producer
	i.mu.Unlock()
	if err != nil {
		i.fail(err, true)
		return err
	}
	if credits > 0 {
		link.grantCredit(credits)
	}
	return nil
}

// Ready reports whether Next would return at once: a record is buffered, or the channel
// ended or failed. A consumer uses it to batch what it hands on without waiting.
func (i *Input) Ready() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.err != nil || (i.cur != nil && i.pos < len(i.cur)) || len(i.queue) > 0 || i.ended
}

// BufferedBytes reports the bytes received and not yet read.
func (i *Input) BufferedBytes() int64 {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.bytes
}

// PeakBufferedBytes reports the most bytes this input has held at once; it
// never exceeds its credits × BufferBytes unless records larger than
// BufferBytes were sent.
func (i *Input) PeakBufferedBytes() int64 {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.peak
}

func (i *Input) recycleCurLocked() {
	i.bytes -= int64(len(i.cur))
	i.plane.buffered.Add(-int64(len(i.cur)))
	i.plane.pool.put(i.cur)
	releaseSide(i.curSide)
	i.cur, i.curSide, i.pos = nil, nil, 0
}

func (i *Input) signalLocked() {
	close(i.changed)
	i.changed = make(chan struct{})
}

// bind attaches the producer and grants it the initial credits.
func (i *Input) bind(link consumerLink) error {
	i.mu.Lock()
	if i.err != nil {
		err := i.err
		i.mu.Unlock()
		return err
	}
	if i.producer != nil {
		i.mu.Unlock()
		return fmt.Errorf("%w: channel %s already has a producer", ErrProtocol, i.id)
	}
	i.producer = link
	grant := i.credits
	i.outstanding = grant
	i.mu.Unlock()
	link.grantCredit(grant)
	return nil
}

// deliver queues a received buffer and its side car; ownership of both passes to the input.
func (i *Input) deliver(buf []byte, side any) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	switch {
	case i.err != nil:
		i.plane.pool.put(buf) // released or failed: drop late data
		releaseSide(side)
		return nil
	case i.ended:
		return fmt.Errorf("%w: channel %s received data after end of stream", ErrProtocol, i.id)
	case i.outstanding == 0:
		return fmt.Errorf("%w: channel %s received a buffer without credit (limit %d buffers)", ErrProtocol, i.id, i.credits)
	}
	i.outstanding--
	i.queue = append(i.queue, received{buf: buf, side: side})
	i.bytes += int64(len(buf))
	i.peak = max(i.peak, i.bytes)
	i.plane.buffered.Add(int64(len(buf)))
	i.signalLocked()
	return nil
}

// end marks the end of stream; Next returns io.EOF once the queue is drained.
func (i *Input) end() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.err == nil && !i.ended {
		i.ended = true
		i.signalLocked()
	}
}

// fail makes every pending and future Next return err, drops the buffered
// data and, with notify, tells the producer.
func (i *Input) fail(err error, notify bool) {
	i.mu.Lock()
	if i.err != nil {
		i.mu.Unlock()
		return
	}
	i.err = err
	for _, r := range i.queue {
		i.plane.pool.put(r.buf)
		releaseSide(r.side)
	}
	dropped := i.bytes
	// cur and its side car may still be read by the caller: not recycled
	i.queue, i.cur, i.curSide, i.pos, i.bytes = nil, nil, nil, 0, 0
	i.plane.buffered.Add(-dropped)
	link, ended := i.producer, i.ended
	i.signalLocked()
	i.mu.Unlock()
	if notify && link != nil && !ended {
		link.reject(err)
	}
}
