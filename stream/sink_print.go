package stream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Print writes every record as "<subtask+1>> <value>" (Flink's print sink) to w, or to
// standard output when w is nil. Output is flushed as execution.buffer-timeout says
// (Runtime.BufferTimeout: every record, at most that long after a record, or only when the
// buffer is full), and at every checkpoint, watermark and the end.
func Print[T any](s DataStream[T], name string, w io.Writer) {
	Sink(s, name, func() Operator { return &printOp{w: w} })
}

// printMu serialises writers that share one io.Writer (several subtasks in one process).
var printMu sync.Mutex

type printOp struct {
	BaseOperator
	w       io.Writer
	timeout time.Duration
	prefix  string

	mu    sync.Mutex // buf and timer: the buffer timeout flushes from the timer's goroutine
	buf   *bufio.Writer
	timer *time.Timer
	armed bool
	err   error // of a timed flush, returned by the next call
}

func (o *printOp) Open(_ context.Context, rt Runtime, _ StateReader) error {
	if o.w == nil {
		o.w = os.Stdout
	}
	o.buf = bufio.NewWriterSize(lockedWriter{o.w}, 16*1024)
	o.prefix = strconv.Itoa(rt.Subtask+1) + "> "
	o.timeout = rt.BufferTimeout
	return nil
}

func (o *printOp) Process(v any, _ int64, _ Collector) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if _, err := fmt.Fprintf(o.buf, "%s%v\n", o.prefix, v); err != nil {
		return fmt.Errorf("print sink: %w", err)
	}
	switch {
	case o.timeout == 0:
		return o.flushLocked()
	case o.timeout > 0 && !o.armed:
		o.armed = true
		if o.timer == nil {
			o.timer = time.AfterFunc(o.timeout, o.timedFlush)
		} else {
			o.timer.Reset(o.timeout)
		}
	}
	return nil
}

// SetBufferTimeout follows a reloaded execution.buffer-timeout: what is buffered now leaves at
// once with 0, waits for the buffer to fill with -1, and leaves at most d from now otherwise.
func (o *printOp) SetBufferTimeout(d time.Duration) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timeout = d
	if o.err != nil {
		return o.err
	}
	switch {
	case o.buf == nil || o.buf.Buffered() == 0:
		if o.timer != nil {
			o.timer.Stop()
		}
		o.armed = false
	case d == 0:
		return o.flushLocked()
	case d < 0:
		if o.timer != nil {
			o.timer.Stop()
		}
		o.armed = false
	default:
		o.armed = true
		if o.timer == nil {
			o.timer = time.AfterFunc(d, o.timedFlush)
		} else {
			o.timer.Reset(d)
		}
	}
	return nil
}

func (o *printOp) timedFlush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.armed = false
	if o.err == nil {
		o.err = o.flushLocked()
	}
}

func (o *printOp) flushLocked() error {
	if err := o.buf.Flush(); err != nil {
		return fmt.Errorf("print sink: %w", err)
	}
	return nil
}

func (o *printOp) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	return o.flushLocked()
}

func (o *printOp) Snapshot(int64, StateWriter) error { return o.flush() }

func (o *printOp) EndInput(context.Context, Collector) error { return o.flush() }

func (o *printOp) Watermark(int64, Collector) error { return o.flush() }

func (o *printOp) Close() error {
	if o.buf == nil {
		return nil
	}
	o.mu.Lock()
	if o.timer != nil {
		o.timer.Stop()
	}
	o.mu.Unlock()
	return o.flush()
}

type lockedWriter struct{ w io.Writer }

func (l lockedWriter) Write(p []byte) (int, error) {
	printMu.Lock()
	defer printMu.Unlock()
	return l.w.Write(p)
}
