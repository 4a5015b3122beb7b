package stream

import "github.com/tidestream/tide/state"

// AsyncStateWriter is implemented by the StateWriter of an asynchronous checkpoint: keyed
// state on the heap takes a copy-on-write view at the barrier (cheap, whatever its size)
// and hands Defer the writing of its entries, which the checkpoint runs on its upload
// goroutine, before it encodes the file, while the subtask goes on processing. write
// receives the same operator's writer; release frees the view and runs once whether or
// not write ran (a checkpoint given up). write must read only the view (and the state's
// codec, which is then used by two goroutines at once: codecs must be safe for that, as
// the built-in ones are).
type AsyncStateWriter interface {
	StateWriter
	// Async reports whether Defer may be used (false: write now, as in a final checkpoint).
	Async() bool
	Defer(write func(w StateWriter) error, release func())
}

// asyncWriter returns w as an AsyncStateWriter when it takes deferred writes.
func asyncWriter(w StateWriter) (AsyncStateWriter, bool) {
	aw, ok := w.(AsyncStateWriter)
	return aw, ok && aw.Async()
}

// writeNowOrLater hands write and release to w's Defer when w takes deferred writes, else
// runs write at once and then release.
func writeNowOrLater(w StateWriter, write func(w StateWriter) error, release func()) error {
	if aw, ok := asyncWriter(w); ok {
		aw.Defer(write, release)
		return nil
	}
	defer release()
	return write(w)
}

// snapshotView writes a state view's entries with write: from a view of be taken now and
// deferred to the upload when w is asynchronous and be is on the heap (whose views are
// copy-on-write), else at once from be.
func snapshotView(w StateWriter, be state.Backend, write func(r state.Reader, w StateWriter) error) error {
	if _, ok := asyncWriter(w); !ok || be.Type() != state.Hashmap {
		return write(be, w)
	}
	v, err := be.View()
	if err != nil {
		return err
	}
	return writeNowOrLater(w, func(w StateWriter) error { return write(v, w) }, func() { _ = v.Close() })
}
