package snapshot

import (
	"fmt"

	"github.com/tidestream/tide/stream"
)

// deferred is one operator state's entries written after the barrier (stream.AsyncStateWriter).
type deferred struct {
	op      *opWriter
	write   func(stream.StateWriter) error
	release func()
}

// AllowDeferred makes the writer take deferred writes: keyed state on the heap then hands
// it the encoding of a copy-on-write view instead of writing its entries at the barrier.
// The owner runs them with RunDeferred (off the subtask's goroutine) before encoding, and
// calls Release in every case.
func (w *Writer) AllowDeferred() { w.async = true }

// Async reports whether the writer takes deferred writes.
func (o *opWriter) Async() bool { return o.w != nil && o.w.async }

// Defer queues a write of the operator's state to run by RunDeferred.
func (o *opWriter) Defer(write func(stream.StateWriter) error, release func()) {
	o.w.deferred = append(o.w.deferred, deferred{op: o, write: write, release: release})
}

// Deferred is the number of writes queued and not yet run.
func (w *Writer) Deferred() int { return len(w.deferred) }

// RunDeferred runs the queued writes, each into its operator's state, and releases their
// views; after an error the remaining ones are released without running.
func (w *Writer) RunDeferred() error {
	var err error
	for i, d := range w.deferred {
		if err == nil {
			if e := d.write(d.op); e != nil {
				err = fmt.Errorf("operator %q: %w", d.op.id, e)
			}
		}
		d.release()
		w.deferred[i] = deferred{}
	}
	w.deferred = nil
	return err
}

// Release releases the views of writes not run (a checkpoint given up); idempotent.
func (w *Writer) Release() {
	for _, d := range w.deferred {
		d.release()
	}
	w.deferred = nil
}
