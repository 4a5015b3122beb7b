package snapshot

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/tidestream/tide/state"
)

// KeyedSource yields keyed entries to add to a file besides a Writer's: every entry of one
// (operator, state, key group) comes in one contiguous run (a state backend's view
// iterated in key order does that). It is called twice and must yield the same entries.
type KeyedSource func(fn func(op, state string, kg int, key, value []byte) error) error

// CoverBackend marks the writer as taking the keyed state held in be itself (from a view,
// through EncodeTo's KeyedSource): operators then skip writing that state in Snapshot
// (stream.BackendSnapshotter), so the barrier costs no iteration of the backend.
func (w *Writer) CoverBackend(be state.Backend) { w.backend = be }

// SnapshotsBackend reports whether the writer takes be's entries itself.
func (o *opWriter) SnapshotsBackend(be state.Backend) bool {
	return o.w != nil && o.w.backend != nil && o.w.backend == be
}

type srcGroup struct {
	op, state string
	kg        int
	length    int64
}

// EncodeTo writes the file of the writer's state plus src's entries to out, streaming
// src's entries and those of the deferred writes (two passes: sizes, then bytes; see
// deferred_stream.go) instead of holding them in memory. It runs and releases the
// deferred writes. It returns the number of bytes written.
func (w *Writer) EncodeTo(out io.Writer, h Header, src KeyedSource) (int64, error) {
	plans, ok, err := w.planDeferred()
	if err != nil {
		return 0, err
	}
	if !ok {
		if err := w.RunDeferred(); err != nil {
			return 0, err
		}
	}
	var deferredRuns []srcGroup
	for _, p := range plans {
		deferredRuns = append(deferredRuns, p.runs...)
	}
	var groups []srcGroup
	if src != nil {
		err := src(func(op, st string, kg int, key, value []byte) error {
			n := entryLen(key, value)
			if l := len(groups); l > 0 && groups[l-1].op == op && groups[l-1].state == st && groups[l-1].kg == kg {
				groups[l-1].length += n
				return nil
			}
			groups = append(groups, srcGroup{op: op, state: st, kg: kg, length: n})
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("sizing the keyed state: %w", err)
		}
	}
	// The writer's own blocks come first, laid out as Encode lays them.
	data, index := w.layout()
	offset := int64(len(data))
	for _, g := range slices.Concat(deferredRuns, groups) {
		oi := index.op(g.op)
		ki := oi.keyed(g.state)
		ki.Groups = append(ki.Groups, Block{KeyGroup: g.kg, Offset: offset, Length: g.length})
		offset += g.length
	}
	h.Operators = index.ops
	hb := appendHeader(nil, h)
	bw := bufio.NewWriterSize(out, 256<<10)
	cw := &countingWriter{w: bw}
	pre := append([]byte(Magic), Version)
	pre = binary.AppendUvarint(pre, uint64(len(hb)))
	for _, b := range [][]byte{pre, hb, data} {
		if _, err := cw.Write(b); err != nil {
			return cw.n, err
		}
	}
	data = nil
	if err := w.streamDeferred(cw, plans); err != nil {
		return cw.n, err
	}
	if src != nil {
		gi, inGroup := 0, int64(0)
		var scratch [binary.MaxVarintLen64]byte
		err := src(func(op, st string, kg int, key, value []byte) error {
			for gi < len(groups) && inGroup == groups[gi].length {
				gi, inGroup = gi+1, 0
			}
			if gi >= len(groups) || groups[gi].op != op || groups[gi].state != st || groups[gi].kg != kg {
				return fmt.Errorf("operator %q state %q key group %d: the keyed state changed between the two passes", op, st, kg)
			}
			n, err := writeEntry(cw, scratch[:0], key, value)
			inGroup += n
			return err
		})
		if err != nil {
			return cw.n, err
		}
	}
	if want := int64(len(pre)+len(hb)) + offset; cw.n != want {
		return cw.n, fmt.Errorf("the keyed state changed between the two passes: %d bytes written, %d sized", cw.n, want)
	}
	return cw.n, bw.Flush()
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type layoutIndex struct{ ops []OperatorIndex }

func (l *layoutIndex) op(id string) *OperatorIndex {
	for i := range l.ops {
		if l.ops[i].ID == id {
			return &l.ops[i]
		}
	}
	l.ops = append(l.ops, OperatorIndex{ID: id})
	return &l.ops[len(l.ops)-1]
}

func (o *OperatorIndex) keyed(state string) *KeyedIndex {
	for i := range o.Keyed {
		if o.Keyed[i].State == state {
			return &o.Keyed[i]
		}
	}
	o.Keyed = append(o.Keyed, KeyedIndex{State: state})
	return &o.Keyed[len(o.Keyed)-1]
}
