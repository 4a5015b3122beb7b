package snapshot

import (
	"fmt"
	"slices"

	"github.com/tidestream/tide/stream"
)

// Restore is the state one subtask restores from: the keyed blocks of its key groups and
// its share of list state, gathered from every file of its vertex.
type Restore struct {
	subtask, parallelism int
	kgStart, kgEnd       int
	ops                  map[string]*opRestore
	files                int
	oldParallelism       int          // parallelism the files were written at (0: none added)
	ended                map[int]bool // old subtasks whose file says EndedInput
	mixed                bool         // files of different parallelisms were added
}

type opRestore struct {
	keyed map[string][]keyedBlock
	lists map[string]*listAcc
}

type keyedBlock struct {
	kg   int
	data []byte
}

type listAcc struct {
	mode  stream.ListMode
	items []stream.ListItem
}

// NewRestore prepares the restore of subtask (of parallelism) owning key groups kgStart..kgEnd.
func NewRestore(subtask, parallelism, kgStart, kgEnd int) *Restore {
	return &Restore{subtask: subtask, parallelism: parallelism, kgStart: kgStart, kgEnd: kgEnd, ops: map[string]*opRestore{}}
}

// Wants reports whether the subtask owns key group kg (pass it to Read).
func (r *Restore) Wants(kg int) bool { return kg >= r.kgStart && kg <= r.kgEnd }

// Add merges one file of the vertex.
func (r *Restore) Add(f *File) error {
	r.files++
	switch {
	case r.oldParallelism == 0:
		r.oldParallelism = f.Header.Parallelism
	case r.oldParallelism != f.Header.Parallelism:
		r.mixed = true
	}
	if f.Header.EndedInput {
		if r.ended == nil {
			r.ended = map[int]bool{}
		}
		r.ended[f.Header.Subtask] = true
	}
	for _, o := range f.Header.Operators {
		or := r.ops[o.ID]
		if or == nil {
			or = &opRestore{keyed: map[string][]keyedBlock{}, lists: map[string]*listAcc{}}
			r.ops[o.ID] = or
		}
		for _, k := range o.Keyed {
			for _, g := range k.Groups {
				if !r.Wants(g.KeyGroup) {
					continue
				}
				data, ok := f.block(g)
				if !ok {
					return fmt.Errorf("vertex %q subtask %d, operator %q state %q: key group %d was not loaded", f.Header.Vertex, f.Header.Subtask, o.ID, k.State, g.KeyGroup)
				}
				or.keyed[k.State] = append(or.keyed[k.State], keyedBlock{kg: g.KeyGroup, data: data})
			}
		}
		for _, l := range o.Lists {
			data, ok := f.block(l.Block)
			if !ok {
				return fmt.Errorf("vertex %q subtask %d, operator %q: list state %q was not loaded", f.Header.Vertex, f.Header.Subtask, o.ID, l.State)
			}
			acc := or.lists[l.State]
			if acc == nil {
				acc = &listAcc{mode: l.Mode}
				or.lists[l.State] = acc
			}
			if acc.mode != l.Mode {
				return fmt.Errorf("operator %q list state %q: written with modes %d and %d", o.ID, l.State, acc.mode, l.Mode)
			}
			err := forEachEntry(data, func(id, d []byte) error {
				acc.items = append(acc.items, stream.ListItem{ID: string(id), Data: slices.Clone(d)})
				return nil
			})
			if err != nil {
				return fmt.Errorf("vertex %q subtask %d, operator %q list state %q: %w", f.Header.Vertex, f.Header.Subtask, o.ID, l.State, err)
			}
		}
	}
	return nil
}

// VertexEnded reports whether every subtask of the vertex had ended its input when the
// checkpoint was taken: the files added cover all subtasks of the parallelism they were
// written at and each carries the EndedInput flag. A vertex whose subtasks only partly
// ended restores normally (the ended ones wrote empty source splits, so nothing is read
// twice).
func (r *Restore) VertexEnded() bool {
	return r.oldParallelism > 0 && !r.mixed && r.files == r.oldParallelism && len(r.ended) == r.oldParallelism
}

// Operator returns the operator's state reader; an operator without saved state gets an
// empty (non-nil) reader, since the job as a whole is restoring.
func (r *Restore) Operator(id string) stream.StateReader {
	or := r.ops[id]
	if or == nil {
		or = &opRestore{}
	}
	return &opReader{r: r, op: or}
}

type opReader struct {
	r  *Restore
	op *opRestore
}

func (o *opReader) Keyed(state string, fn func(kg int, key, value []byte) error) error {
	for _, b := range o.op.keyed[state] {
		kg := b.kg
		if err := forEachEntry(b.data, func(k, v []byte) error { return fn(kg, k, v) }); err != nil {
			return fmt.Errorf("keyed state %q, key group %d: %w", state, kg, err)
		}
	}
	return nil
}

func (o *opReader) List(state string) []stream.ListItem {
	acc := o.op.lists[state]
	if acc == nil {
		return nil
	}
	items := slices.Clone(acc.items)
	slices.SortStableFunc(items, func(a, b stream.ListItem) int { return stream.CompareIDs(a.ID, b.ID) })
	if acc.mode == stream.Union {
		return items
	}
	var mine []stream.ListItem
	for i := o.r.subtask; i < len(items); i += o.r.parallelism {
		mine = append(mine, items[i])
	}
	return mine
}
