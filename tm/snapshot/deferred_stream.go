package snapshot

import (
	"encoding/binary"
	"fmt"

	"github.com/tidestream/tide/stream"
)

// Streaming the deferred writes. EncodeTo runs each deferred write (a copy-on-write view
// of heap keyed state) twice instead of collecting its entries in key-group buffers: a
// first pass only adds up the bytes of each (state, key group) run, which the file's
// header needs before the data; the second pass writes every entry straight to the
// output. Nothing of the state's size is held in memory, so an upload of heap state
// allocates about as much as one entry, and the view is released as soon as its entries
// are written. A view is immutable, so both passes see the same entries; the order of
// entries within a key group may differ between them (Go maps), their sizes do not.
//
// A write that cannot be streamed (it emits list items, or one (state, key group) in two
// separate runs, or a key group the writer's own blocks also hold) makes EncodeTo fall
// back to running every deferred write into the writer's buffers (RunDeferred).

// deferredPlan is the first pass over one deferred write: its runs in the order the
// write emits them.
type deferredPlan struct {
	runs []srcGroup
}

// runKey names one (operator, state, key group) run.
type runKey struct {
	op, state string
	kg        int
}

// sizingWriter is the first pass's StateWriter: it measures the runs.
type sizingWriter struct {
	op   string
	runs []srcGroup
	seen map[runKey]bool // runs already closed (a second one means no streaming)
	bad  string          // why the write cannot be streamed ("": it can)
}

func (s *sizingWriter) Keyed(state string, kg int, key, value []byte) {
	n := entryLen(key, value)
	if l := len(s.runs); l > 0 && s.runs[l-1].state == state && s.runs[l-1].kg == kg {
		s.runs[l-1].length += n
		return
	}
	k := runKey{op: s.op, state: state, kg: kg}
	if s.seen[k] {
		s.bad = fmt.Sprintf("state %q key group %d comes in two separate runs", state, kg)
	}
	s.seen[k] = true
	s.runs = append(s.runs, srcGroup{op: s.op, state: state, kg: kg, length: n})
}

func (s *sizingWriter) List(state string, _ stream.ListMode, _ stream.ListItem) {
	s.bad = fmt.Sprintf("list state %q is written by a deferred write", state)
}

func entryLen(key, value []byte) int64 {
	return int64(uvarintLen(uint64(len(key))) + len(key) + uvarintLen(uint64(len(value))) + len(value))
}

// planDeferred runs the first pass of every deferred write. ok is false when one of them
// cannot be streamed (the caller then buffers them all); an error is a write's own.
func (w *Writer) planDeferred() (plans []deferredPlan, ok bool, err error) {
	seen := map[runKey]bool{}
	// The writer's own keyed blocks: a deferred run of the same key group cannot be a
	// block of its own.
	for _, o := range w.ops {
		for st, groups := range o.keyed {
			for kg := range groups {
				seen[runKey{op: o.id, state: st, kg: kg}] = true
			}
		}
	}
	plans = make([]deferredPlan, len(w.deferred))
	for i, d := range w.deferred {
		sw := &sizingWriter{op: d.op.id, seen: seen}
		if err := d.write(sw); err != nil {
			return nil, false, fmt.Errorf("operator %q: %w", d.op.id, err)
		}
		if sw.bad != "" {
			return nil, false, nil
		}
		plans[i] = deferredPlan{runs: sw.runs}
	}
	return plans, true, nil
}

// streamWriter is the second pass's StateWriter: it writes each entry to out, checking
// that the runs are those the first pass measured.
type streamWriter struct {
	out    *countingWriter
	runs   []srcGroup
	ri     int   // the run being written
	inRun  int64 // its bytes written so far
	varint [2 * 10]byte
	err    error
}

func (s *streamWriter) Keyed(state string, kg int, key, value []byte) {
	if s.err != nil {
		return
	}
	for s.ri < len(s.runs) && s.inRun == s.runs[s.ri].length {
		s.ri, s.inRun = s.ri+1, 0
	}
	if s.ri >= len(s.runs) || s.runs[s.ri].state != state || s.runs[s.ri].kg != kg {
		s.err = fmt.Errorf("state %q key group %d: the keyed state changed between the two passes", state, kg)
		return
	}
	n, err := writeEntry(s.out, s.varint[:0], key, value)
	s.inRun += n
	s.err = err
}

func (s *streamWriter) List(state string, _ stream.ListMode, _ stream.ListItem) {
	if s.err == nil {
		s.err = fmt.Errorf("list state %q: the state changed between the two passes", state)
	}
}

// done reports an error unless every run was written in full.
func (s *streamWriter) done() error {
	if s.err != nil {
		return s.err
	}
	for s.ri < len(s.runs) && s.inRun == s.runs[s.ri].length {
		s.ri, s.inRun = s.ri+1, 0
	}
	if s.ri != len(s.runs) {
		return fmt.Errorf("state %q key group %d: the keyed state changed between the two passes", s.runs[s.ri].state, s.runs[s.ri].kg)
	}
	return nil
}

// writeEntry writes one entry (key and value, each behind its length) without copying
// them into a buffer of its own; scratch holds the lengths.
func writeEntry(out *countingWriter, scratch, key, value []byte) (int64, error) {
	start := out.n
	if _, err := out.Write(binary.AppendUvarint(scratch[:0], uint64(len(key)))); err != nil {
		return out.n - start, err
	}
	if _, err := out.Write(key); err != nil {
		return out.n - start, err
	}
	if _, err := out.Write(binary.AppendUvarint(scratch[:0], uint64(len(value)))); err != nil {
		return out.n - start, err
	}
	_, err := out.Write(value)
	return out.n - start, err
}

// streamDeferred runs the second pass of every deferred write, releasing each view as
// soon as its entries are written.
func (w *Writer) streamDeferred(out *countingWriter, plans []deferredPlan) error {
	for i, d := range w.deferred {
		sw := &streamWriter{out: out, runs: plans[i].runs}
		err := d.write(sw)
		d.release()
		w.deferred[i] = deferred{release: func() {}}
		if err == nil {
			err = sw.done()
		}
		if err != nil {
			return fmt.Errorf("operator %q: %w", d.op.id, err)
		}
	}
	w.deferred = nil
	return nil
}
