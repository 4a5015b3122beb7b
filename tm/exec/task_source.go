package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/tidestream/tide/stream"
)

// watermarkInterval is how often a source emits an advanced watermark.
const watermarkInterval = 50 * time.Millisecond

// idleWait is how long a source with nothing to emit waits before polling again (calls
// from the AM wake it at once).
const idleWait = 2 * time.Millisecond

// sourceCollector assigns event timestamps and feeds the chain.
type sourceCollector struct{ t *task }

func (s sourceCollector) Collect(v any, ts int64) error {
	if s.t.wmGen != nil {
		ts = s.t.wmGen.Timestamp(v, ts)
	}
	if s.t.metrics.on {
		s.t.metrics.recordIn()
	}
	return s.t.head.Collect(v, ts)
}

// runSource polls the reader until the input ends, serving the mailbox between polls, then
// ends the input and keeps serving checkpoints until the subtask may finish.
func (t *task) runSource(ctx context.Context) error {
	if !t.endedOnRestore {
		if err := t.pollUntilEnd(ctx); err != nil {
			return err
		}
	}
	if err := t.endInput(ctx); err != nil {
		return err
	}
	for !t.done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.mail.signal:
			if err := t.handleMail(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *task) pollUntilEnd(ctx context.Context) error {
	out := sourceCollector{t: t}
	timer := time.NewTimer(idleWait)
	defer timer.Stop()
	for {
		if err := t.handleMail(ctx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := t.reader.Poll(ctx, out)
		if err != nil {
			return fmt.Errorf("source reader: %w", err)
		}
		if err := t.router.flushStaged(); err != nil {
			return err
		}
		if err := t.maybeEmitWatermark(); err != nil {
			return err
		}
		if t.metrics.on {
			t.metrics.sampleLag(t.reader, time.Now())
		}
		switch st {
		case stream.EndOfInput:
			return nil
		case stream.NothingAvailable:
			timer.Reset(idleWait)
			idle := t.metrics.idleStart()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.mail.signal:
			case <-timer.C:
			}
			t.metrics.idleSince(idle)
		}
	}
}

func (t *task) maybeEmitWatermark() error {
	if t.wmGen == nil {
		return nil
	}
	wm := t.wmGen.Current()
	if wr, ok := t.reader.(stream.WatermarkReader); ok {
		wm = wr.ReaderWatermark()
	}
	if wm <= t.watermark {
		return nil
	}
	now := time.Now().UnixNano()
	if now-t.lastWmEmitNanos < int64(watermarkInterval) {
		return nil
	}
	t.lastWmEmitNanos = now
	return t.advanceWatermark(wm)
}
