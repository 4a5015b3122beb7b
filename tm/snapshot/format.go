package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
)

// Magic starts every state file.
const Magic = "TIDESNAP"

// Version is the format version written. Version 2 added the header flags (EndedInput);
// version 1 files are still read.
const Version = 2

// flagEndedInput marks a file written by a subtask whose input had ended.
const flagEndedInput = 1

// ErrCorrupt is wrapped by every parse error.
var ErrCorrupt = errors.New("corrupt state file")

// Header describes one state file.
type Header struct {
	Vertex         string
	Subtask        int
	Parallelism    int
	MaxParallelism int
	KeyGroupStart  int
	KeyGroupEnd    int
	Checkpoint     int64
	Attempt        int64
	// EndedInput says the subtask's input had ended (EndInput had run) when it wrote the
	// file: it was waiting for its final checkpoint or had finished.
	EndedInput bool
	Operators  []OperatorIndex
}

// OperatorIndex locates one operator's state in the data section.
type OperatorIndex struct {
	ID    string
	Keyed []KeyedIndex
	Lists []ListIndex
}

// KeyedIndex locates the blocks of one keyed state, one per key group.
type KeyedIndex struct {
	State  string
	Groups []Block
}

// ListIndex locates one list state.
type ListIndex struct {
	State string
	Mode  stream.ListMode
	Block Block
}

// Block is a byte range of the data section (KeyGroup is unused for list blocks).
type Block struct {
	KeyGroup int
	Offset   int64
	Length   int64
}

// Writer collects the state of the operators of one subtask.
type Writer struct {
	ops []*opWriter
	// backend is the keyed state backend whose entries the writer takes itself (CoverBackend).
	backend state.Backend
	// async: operators may defer writing their keyed state (AllowDeferred, deferred.go).
	async    bool
	deferred []deferred
}

type opWriter struct {
	w     *Writer
	id    string
	keyed map[string]map[int][]byte
	lists map[string]*listBuf
}

type listBuf struct {
	mode stream.ListMode
	buf  []byte
}

// Operator returns the state writer for one operator (created on first use).
func (w *Writer) Operator(id string) stream.StateWriter {
	for _, o := range w.ops {
		if o.id == id {
			return o
		}
	}
	o := &opWriter{w: w, id: id, keyed: map[string]map[int][]byte{}, lists: map[string]*listBuf{}}
	w.ops = append(w.ops, o)
	return o
}

func (o *opWriter) Keyed(state string, kg int, key, value []byte) {
	groups := o.keyed[state]
	if groups == nil {
		groups = map[int][]byte{}
		o.keyed[state] = groups
	}
	b := groups[kg]
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	b = append(b, value...)
	groups[kg] = b
}

func (o *opWriter) List(state string, mode stream.ListMode, item stream.ListItem) {
	l := o.lists[state]
	if l == nil {
		l = &listBuf{mode: mode}
		o.lists[state] = l
	}
	l.buf = stream.AppendString(l.buf, item.ID)
	l.buf = binary.AppendUvarint(l.buf, uint64(len(item.Data)))
	l.buf = append(l.buf, item.Data...)
}

// Encode returns the file's bytes; h.Operators is filled in from the collected state.
func (w *Writer) Encode(h Header) []byte {
	data, index := w.layout()
	h.Operators = index.ops
	hb := appendHeader(nil, h)
	out := make([]byte, 0, len(Magic)+1+binary.MaxVarintLen64+len(hb)+len(data))
	out = append(out, Magic...)
	out = append(out, Version)
	out = binary.AppendUvarint(out, uint64(len(hb)))
	out = append(out, hb...)
	return append(out, data...)
}

// layout lays the collected state out as the data section and its index.
func (w *Writer) layout() ([]byte, *layoutIndex) {
	var data []byte
	index := &layoutIndex{}
	for _, o := range w.ops {
		oi := OperatorIndex{ID: o.id}
		for _, name := range sortedKeys(o.keyed) {
			ki := KeyedIndex{State: name}
			groups := o.keyed[name]
			kgs := make([]int, 0, len(groups))
			for kg := range groups {
				kgs = append(kgs, kg)
			}
			sort.Ints(kgs)
			for _, kg := range kgs {
				ki.Groups = append(ki.Groups, Block{KeyGroup: kg, Offset: int64(len(data)), Length: int64(len(groups[kg]))})
				data = append(data, groups[kg]...)
			}
			oi.Keyed = append(oi.Keyed, ki)
		}
		for _, name := range sortedKeys(o.lists) {
			l := o.lists[name]
			oi.Lists = append(oi.Lists, ListIndex{State: name, Mode: l.mode, Block: Block{Offset: int64(len(data)), Length: int64(len(l.buf))}})
			data = append(data, l.buf...)
		}
		index.ops = append(index.ops, oi)
	}
	return data, index
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func appendHeader(b []byte, h Header) []byte {
	b = stream.AppendString(b, h.Vertex)
	for _, v := range []int{h.Subtask, h.Parallelism, h.MaxParallelism, h.KeyGroupStart, h.KeyGroupEnd} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	b = binary.AppendVarint(b, h.Checkpoint)
	b = binary.AppendVarint(b, h.Attempt)
	var flags uint64
	if h.EndedInput {
		flags |= flagEndedInput
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(len(h.Operators)))
	for _, o := range h.Operators {
		b = stream.AppendString(b, o.ID)
		b = binary.AppendUvarint(b, uint64(len(o.Keyed)))
		for _, k := range o.Keyed {
			b = stream.AppendString(b, k.State)
			b = binary.AppendUvarint(b, uint64(len(k.Groups)))
			for _, g := range k.Groups {
				b = binary.AppendUvarint(b, uint64(g.KeyGroup))
				b = binary.AppendUvarint(b, uint64(g.Offset))
				b = binary.AppendUvarint(b, uint64(g.Length))
			}
		}
		b = binary.AppendUvarint(b, uint64(len(o.Lists)))
		for _, l := range o.Lists {
			b = stream.AppendString(b, l.State)
			b = binary.AppendUvarint(b, uint64(l.Mode))
			b = binary.AppendUvarint(b, uint64(l.Block.Offset))
			b = binary.AppendUvarint(b, uint64(l.Block.Length))
		}
	}
	return b
}

// parseHeader decodes a header of the given format version.
func parseHeader(b []byte, version byte) (Header, error) {
	d := stream.NewDecoder(b)
	var h Header
	h.Vertex = d.String()
	ints := []*int{&h.Subtask, &h.Parallelism, &h.MaxParallelism, &h.KeyGroupStart, &h.KeyGroupEnd}
	for _, p := range ints {
		*p = int(d.Uvarint())
	}
	h.Checkpoint = d.Varint()
	h.Attempt = d.Varint()
	if version >= 2 {
		flags := d.Uvarint()
		if flags&^flagEndedInput != 0 {
			return h, fmt.Errorf("%w: vertex %q subtask %d: unknown header flags %#x", ErrCorrupt, h.Vertex, h.Subtask, flags)
		}
		h.EndedInput = flags&flagEndedInput != 0
	}
	count := func() int {
		n := d.Uvarint()
		if n > uint64(d.Remaining()) {
			return -1
		}
		return int(n)
	}
	nOps := count()
	for i := 0; i < nOps && d.Err() == nil; i++ {
		oi := OperatorIndex{ID: d.String()}
		nk := count()
		for j := 0; j < nk && d.Err() == nil; j++ {
			ki := KeyedIndex{State: d.String()}
			ng := count()
			for g := 0; g < ng && d.Err() == nil; g++ {
				ki.Groups = append(ki.Groups, Block{KeyGroup: int(d.Uvarint()), Offset: int64(d.Uvarint()), Length: int64(d.Uvarint())})
			}
			if ng < 0 {
				return h, fmt.Errorf("%w: operator %q state %q: group count exceeds header", ErrCorrupt, oi.ID, ki.State)
			}
			oi.Keyed = append(oi.Keyed, ki)
		}
		nl := count()
		for j := 0; j < nl && d.Err() == nil; j++ {
			oi.Lists = append(oi.Lists, ListIndex{State: d.String(), Mode: stream.ListMode(d.Uvarint()),
				Block: Block{Offset: int64(d.Uvarint()), Length: int64(d.Uvarint())}})
		}
		if nk < 0 || nl < 0 {
			return h, fmt.Errorf("%w: operator %q: state count exceeds header", ErrCorrupt, oi.ID)
		}
		h.Operators = append(h.Operators, oi)
	}
	if nOps < 0 {
		return h, fmt.Errorf("%w: operator count exceeds header", ErrCorrupt)
	}
	if d.Err() != nil {
		return h, fmt.Errorf("%w: header: %w", ErrCorrupt, d.Err())
	}
	if d.Remaining() != 0 {
		return h, fmt.Errorf("%w: %d trailing header bytes", ErrCorrupt, d.Remaining())
	}
	if h.MaxParallelism < 1 || h.Parallelism < 1 || h.Parallelism > h.MaxParallelism || h.Subtask >= h.Parallelism ||
		h.KeyGroupStart > h.KeyGroupEnd+1 || h.KeyGroupEnd >= h.MaxParallelism {
		return h, fmt.Errorf("%w: vertex %q subtask %d: inconsistent parallelism %d / maxParallelism %d / key groups %d..%d",
			ErrCorrupt, h.Vertex, h.Subtask, h.Parallelism, h.MaxParallelism, h.KeyGroupStart, h.KeyGroupEnd)
	}
	return h, nil
}
