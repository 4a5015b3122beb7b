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
	Sink(s, name, func() Operator { return &printOp[T]{w: w} })
}

// printMu serialises writers that share one io.Writer (several subtasks in one process).
var printMu sync.Mutex

type printOp[T any] struct {
	BaseOperator
	w       io.Writer
	timeout time.Duration
	prefix  string
	num     []byte // a number's digits

	mu    sync.Mutex // buf and timer: the buffer timeout flushes from the timer's goroutine
	buf   *bufio.Writer
	timer *time.Timer
	armed bool
	err   error // of a timed flush, returned by the next call
}

func (o *printOp[T]) Open(_ context.Context, rt Runtime, _ StateReader) error {
	if o.w == nil {
		o.w = os.Stdout
	}
	o.buf = bufio.NewWriterSize(lockedWriter{o.w}, 16*1024)
	o.prefix = strconv.Itoa(rt.Subtask+1) + "> "
	o.timeout = rt.BufferTimeout
	return nil
}

func (o *printOp[T]) link(next Collector) Collector { return linkTyped[T](o, next) }

func (o *printOp[T]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(T), ts, out)
}

// processTyped writes "<prefix><v>\n" as fmt's %v does; strings and numbers without fmt
// (which would box them).
func (o *printOp[T]) processTyped(v T, _ int64, _ Collector) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	o.buf.WriteString(o.prefix)
	switch x := any(v).(type) {
	case string:
		o.buf.WriteString(x)
	case int64:
		o.num = strconv.AppendInt(o.num[:0], x, 10)
		o.buf.Write(o.num)
	case int:
		o.num = strconv.AppendInt(o.num[:0], int64(x), 10)
		o.buf.Write(o.num)
	case float64:
		o.num = strconv.AppendFloat(o.num[:0], x, 'g', -1, 64)
		o.buf.Write(o.num)
	default:
		// v, not x: x escaping into fmt would make every case above box v too.
		fmt.Fprint(o.buf, v)
	}
	if err := o.buf.WriteByte('\n'); err != nil {
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
func (o *printOp[T]) SetBufferTimeout(d time.Duration) error {
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

func (o *printOp[T]) timedFlush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.armed = false
	if o.err == nil {
		o.err = o.flushLocked()
	}
}

func (o *printOp[T]) flushLocked() error {
	if err := o.buf.Flush(); err != nil {
		return fmt.Errorf("print sink: %w", err)
	}
	return nil
}

func (o *printOp[T]) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	return o.flushLocked()
}

func (o *printOp[T]) Snapshot(int64, StateWriter) error { return o.flush() }

func (o *printOp[T]) EndInput(context.Context, Collector) error { return o.flush() }

func (o *printOp[T]) Watermark(int64, Collector) error { return o.flush() }

func (o *printOp[T]) Close() error {
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
