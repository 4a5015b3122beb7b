package netplane

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

// Output is the producing end of one channel. Records are batched into
// buffers of Options.BufferBytes; a buffer leaves only against a credit from
// the consumer, so Write blocks while the consumer has no free buffer.
type Output struct {
	id          ChannelID
	plane       *Plane
	bufferBytes int
	// flushAfter is how long a partly filled buffer may wait (Options.FlushInterval): 0
	// sends every record at once, negative only full buffers.
	flushAfter time.Duration

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced on every state change
	link         producerLink  // set before the output is reachable by credits
	local        bool          // link is a localProducerLink: WriteSides may be used
	buf          []byte        // records not yet sent
	side         any           // buf's side car (WriteSides), nil when buf has none
	sideRecords  int           // records in side
	sideBytes    int           // the in-memory size of side's records: counts against bufferBytes
	runHead      []byte        // WriteSides' scratch for a run head
	credits      int           // buffers the consumer can take
	flushPending bool          // send buf as soon as a credit arrives
	waiting      int           // callers blocked for credit
	waitSince    time.Time     // when waiting last rose from 0
	blocked      time.Duration // time with waiting > 0, the current wait excluded
	closed       bool          // end of stream sent
	timer        *time.Timer   // flushes a partly filled buffer flushAfter after its first record
	timerArmed   bool
	err          error
	// beforeWait runs (without mu) once per Write that is about to block for credit
	// (SetBeforeWait).
	beforeWait func()
}

func newOutput(p *Plane, id ChannelID) *Output {
	return &Output{id: id, plane: p, bufferBytes: p.opts.BufferBytes, flushAfter: p.opts.FlushInterval, changed: make(chan struct{})}
}

// ID returns the channel this output writes.
func (o *Output) ID() ChannelID { return o.id }

// Write appends a record to the current buffer. It blocks while the buffer is
// full and the consumer has granted no credit, until the channel fails, or
// until ctx is done. The record is copied; the caller may reuse it.
func (o *Output) Write(ctx context.Context, record []byte) error {
	return o.WriteRecord(ctx, record, nil)
}

// WriteRecord is Write of the record head followed by body, copied into the buffer
// straight from both (a producer that prefixes its encoded records with a header does not
// join them first).
func (o *Output) WriteRecord(ctx context.Context, head, body []byte) error {
	o.mu.Lock()
	err := o.writeLocked(ctx, head, body)
	o.mu.Unlock()
	return err
}

// RecordRun is a run of encoded records a producer writes to one output in a single call
// (WriteRecords).
type RecordRun interface {
	// Len is the number of records in the run.
	Len() int
	// Record is record k's header and body (valid until the next call).
	Record(k int) (head, body []byte)
}

// WriteRecords is WriteRecord of every record of run, in order, with the output locked
// once for the run. A record that fits in the current buffer is appended with no more
// checks: the output can only fail, close or get credits while its lock is free, and it is
// only freed while a record waits for room (writeLocked). The current buffer is sent or
// scheduled (appendedLocked) once for the records appended together, after the last: a
// buffer they fill leaves when the next record does not fit or the run ends, within this
// call. With a buffer timeout of 0 a record is only appended so behind a buffer that waits
// for a credit, so records leave as they did one call each.
func (o *Output) WriteRecords(ctx context.Context, run RecordRun) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.usableLocked(); err != nil {
		return err
	}
	appended := false
	for k := range run.Len() {
		head, body := run.Record(k)
		size := len(head) + len(body)
		if len(o.buf) > 0 && size < 0x80 && o.usedLocked()+1+size <= o.bufferBytes {
			o.buf = append(append(append(o.buf, byte(size)), head...), body...)
			appended = true
			continue
		}
		if appended {
			appended = false
			o.appendedLocked()
		}
		if err := o.writeLocked(ctx, head, body); err != nil {
			return err
		}
	}
	if appended {
		o.appendedLocked()
	}
	return nil
}

// writeLocked is WriteRecord with o.mu held (it may release and retake it while waiting).
func (o *Output) writeLocked(ctx context.Context, head, body []byte) error {
	size := len(head) + len(body)
	if size > MaxRecordBytes {
		return fmt.Errorf("netplane: channel %s: record of %d bytes, expected at most %d", o.id, size, MaxRecordBytes)
	}
	if err := o.reserveLocked(ctx, recordLen(size)); err != nil {
		return err
	}
	o.buf = append(append(binary.AppendUvarint(o.buf, uint64(len(head)+len(body))), head...), body...)
	o.appendedLocked()
	return nil
}

// reserveLocked waits, with o.mu held (it may release and retake it), until the current
// buffer has room for a record of need bytes (its side car's records counted), sending the
// full one first when a credit allows, and allocates a buffer when there is none.
func (o *Output) reserveLocked(ctx context.Context, need int) error {
	warned := false
	for {
		if err := o.usableLocked(); err != nil {
			return err
		}
		if len(o.buf) == 0 || o.usedLocked()+need <= o.bufferBytes {
			break
		}
		if o.credits > 0 {
			o.sendLocked()
			break
		}
		if fn := o.beforeWait; fn != nil && !warned {
			// The writer is about to stop: let it hand on what its other channels hold
			// first (their consumers may have nothing else to do), then look again.
			warned = true
			o.mu.Unlock()
			fn()
			o.mu.Lock()
			continue
		}
		if err := o.waitLocked(ctx, "write"); err != nil {
			return err
		}
	}
	if o.buf == nil {
		if need > o.bufferBytes {
			o.buf = make([]byte, 0, need)
		} else {
			o.buf = o.plane.pool.get(0)
		}
	}
	return nil
}

// usedLocked is the current buffer's size, its side car's records counted.
func (o *Output) usedLocked() int { return len(o.buf) + o.sideBytes }

// appendedLocked sends or schedules the current buffer after a record was appended to it:
// at once when it is full or the buffer timeout is 0, else when the timeout's timer fires.
func (o *Output) appendedLocked() {
	switch {
	case o.usedLocked() >= o.bufferBytes:
		if o.credits > 0 {
			o.sendLocked()
		}
	case o.flushAfter == 0:
		if o.credits > 0 {
			o.sendLocked()
		} else {
			o.flushPending = true
		}
	case o.flushAfter > 0 && !o.timerArmed:
		o.armTimerLocked()
	}
}

// armTimerLocked starts the buffer timeout of the buffer that just got its first record.
// A timer still armed for a buffer that already left fires early for the next one, which
// only flushes sooner.
func (o *Output) armTimerLocked() {
	o.timerArmed = true
	if o.timer == nil {
		o.timer = time.AfterFunc(o.flushAfter, o.timedFlush)
		return
	}
	o.timer.Reset(o.flushAfter)
}

// SetBufferTimeout changes this output's buffer timeout (the job's execution.buffer-timeout,
// which can be reloaded while the job runs): 0 sends every record at once, negative only full
// buffers, positive a partly filled buffer d after its first record. A partly filled buffer
// waiting now follows the new setting: with 0 it leaves at once (or with the next credit),
// with a positive d at most d from now, with a negative d when it is full or flushed.
func (o *Output) SetBufferTimeout(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d == o.flushAfter {
		return
	}
	o.flushAfter = d
	if o.closed || o.err != nil || len(o.buf) == 0 {
		return
	}
	switch {
	case d == 0:
		if o.credits > 0 {
			o.sendLocked()
		} else {
			o.flushPending = true
		}
	case d < 0:
		if o.timer != nil {
			o.timer.Stop()
		}
		o.timerArmed = false
	default:
		o.armTimerLocked()
	}
}

// SetBeforeWait installs fn, which a Write about to block for the consumer's credit calls
// first, once, without holding the output: a producer writing several channels flushes the
// others' partly filled buffers there (SendIfCredit), so their consumers are not left idle
// until the buffer timeout while this one waits. fn runs on the writer's goroutine and
// must not write to this output.
func (o *Output) SetBeforeWait(fn func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.beforeWait = fn
}

// SendIfCredit sends the current partly filled buffer if the consumer has a credit for it,
// and never waits: with no credit the consumer still holds buffers of this channel to read.
// With a negative buffer timeout (only full buffers leave) it does nothing.
func (o *Output) SendIfCredit() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.err != nil || len(o.buf) == 0 || o.credits == 0 || o.flushAfter < 0 {
		return
	}
	o.sendLocked()
}

// BufferTimeout returns the output's buffer timeout (see SetBufferTimeout).
func (o *Output) BufferTimeout() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flushAfter
}

// stopTimerLocked stops the buffer timeout for good (the output closed or failed).
func (o *Output) stopTimerLocked() {
	if o.timer != nil {
		o.timer.Stop()
	}
	o.timerArmed = false
}

// Flush sends the current partly filled buffer, waiting for a credit if the
// consumer has none to give.
func (o *Output) Flush(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		if err := o.usableLocked(); err != nil {
			return err
		}
		if len(o.buf) == 0 {
			return nil
		}
		if o.credits > 0 {
			o.sendLocked()
			return nil
		}
		o.flushPending = true
		if err := o.waitLocked(ctx, "flush"); err != nil {
			return err
		}
	}
}

// Close flushes what is buffered and sends end of stream; the consumer's
// Next returns io.EOF after draining. Closing twice is a no-op.
func (o *Output) Close(ctx context.Context) error {
	o.mu.Lock()
	for {
		if o.closed {
			o.mu.Unlock()
			return nil
		}
		if o.err != nil {
			err := o.err
			o.mu.Unlock()
			return err
		}
		if len(o.buf) == 0 {
			break
		}
		if o.credits > 0 {
			o.sendLocked()
			break
		}
		o.flushPending = true
		if err := o.waitLocked(ctx, "close"); err != nil {
			o.mu.Unlock()
			return err
		}
	}
	o.closed = true
	o.stopTimerLocked()
	o.link.sendEnd()
	o.signalLocked()
	o.mu.Unlock()
	o.plane.forgetOutput(o)
	return nil
}

// BackPressuredTime is the total time a Write, Flush or Close of this output has been
// blocked waiting for the consumer's credit, the wait under way included (Flink's
// backPressuredTimeMsPerSecond is its growth per second).
func (o *Output) BackPressuredTime() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.blocked
	if o.waiting > 0 {
		d += time.Since(o.waitSince)
	}
	return d
}

// BackPressured reports whether a Write, Flush or Close is blocked waiting
// for the consumer to grant credit.
func (o *Output) BackPressured() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting > 0
}

func (o *Output) usableLocked() error {
	if o.err != nil {
		return o.err
	}
	if o.closed {
		return fmt.Errorf("channel %s: %w", o.id, ErrOutputClosed)
	}
	return nil
}

// waitLocked releases the lock until the state changes or ctx is done.
func (o *Output) waitLocked(ctx context.Context, op string) error {
	ch := o.changed
	if o.waiting == 0 {
		o.waitSince = time.Now()
	}
	o.waiting++
	o.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-ctx.Done():
		err = fmt.Errorf("netplane: %s on channel %s waiting for credit: %w", op, o.id, ctx.Err())
	}
	o.mu.Lock()
	o.waiting--
	if o.waiting == 0 {
		o.blocked += time.Since(o.waitSince)
	}
	return err
}

func (o *Output) signalLocked() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// sendLocked hands the current buffer to the link against one credit.
func (o *Output) sendLocked() {
	buf, side := o.buf, o.side
	o.buf, o.side, o.sideRecords, o.sideBytes = nil, nil, 0, 0
	o.credits--
	o.flushPending = false
	o.link.sendData(buf, side)
}

// addCredit records credits granted by the consumer and sends a buffer that
// was waiting for one.
func (o *Output) addCredit(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.err != nil {
		return
	}
	o.credits += n
	if len(o.buf) > 0 && (o.flushPending || o.usedLocked() >= o.bufferBytes) {
		o.sendLocked()
	}
	o.signalLocked()
}

// timedFlush is the buffer timeout: send a partly filled buffer now, or as
// soon as a credit arrives.
func (o *Output) timedFlush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timerArmed = false
	if o.closed || o.err != nil || len(o.buf) == 0 {
		return
	}
	if o.credits > 0 {
		o.sendLocked()
		return
	}
	o.flushPending = true
}

// fail makes every pending and future call return err and, with notify,
// tells the consumer.
func (o *Output) fail(err error, notify bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.err != nil {
		return
	}
	o.err = err
	o.stopTimerLocked()
	if o.buf != nil {
		o.plane.pool.put(o.buf)
		o.buf = nil
	}
	o.side, o.sideRecords, o.sideBytes = nil, 0, 0
	if notify && o.link != nil {
		o.link.sendReset(err)
	}
	o.signalLocked()
}

// abort resets the consumer's end after the output failed before its link
// was in place.
func (o *Output) abort(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.link != nil {
		o.link.sendReset(err)
	}
}

// setLink installs the transport before the output can receive credits.
func (o *Output) setLink(l producerLink) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.link = l
	_, o.local = l.(localProducerLink)
}

// failure returns the error the output failed with, if any.
func (o *Output) failure() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
