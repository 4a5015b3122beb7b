package stream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// Print writes every record as "<subtask+1>> <value>" (Flink's print sink) to w, or to
// standard output when w is nil. Output is flushed at every checkpoint and at the end.
func Print[T any](s DataStream[T], name string, w io.Writer) {
	Sink(s, name, func() Operator { return &printOp{w: w} })
}

// printMu serialises writers that share one io.Writer (several subtasks in one process).
var printMu sync.Mutex

type printOp struct {
	BaseOperator
	w      io.Writer
	buf    *bufio.Writer
	prefix string
}

func (o *printOp) Open(_ context.Context, rt Runtime, _ StateReader) error {
	if o.w == nil {
		o.w = os.Stdout
	}
	o.buf = bufio.NewWriterSize(lockedWriter{o.w}, 16*1024)
	o.prefix = strconv.Itoa(rt.Subtask+1) + "> "
	return nil
}

func (o *printOp) Process(v any, _ int64, _ Collector) error {
	if _, err := fmt.Fprintf(o.buf, "%s%v\n", o.prefix, v); err != nil {
		return fmt.Errorf("print sink: %w", err)
	}
	return nil
}

func (o *printOp) Snapshot(int64, StateWriter) error { return o.buf.Flush() }

func (o *printOp) EndInput(context.Context, Collector) error { return o.buf.Flush() }

func (o *printOp) Watermark(int64, Collector) error { return o.buf.Flush() }

func (o *printOp) Close() error {
	if o.buf == nil {
		return nil
	}
	return o.buf.Flush()
}

type lockedWriter struct{ w io.Writer }

func (l lockedWriter) Write(p []byte) (int, error) {
	printMu.Lock()
	defer printMu.Unlock()
	return l.w.Write(p)
}
