package stream_test

import (
	"context"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// rec is one emitted record.
type rec struct {
	v  any
	ts int64
}

type sliceCollector struct{ out []rec }

func (s *sliceCollector) Collect(v any, ts int64) error {
	s.out = append(s.out, rec{v, ts})
	return nil
}

// vertexOps returns fresh operators of the job's vertex id.
func vertexOps(t *testing.T, job *stream.Job, id string) []stream.ChainOperator {
	t.Helper()
	v, err := job.Vertex(id)
	if err != nil {
		t.Fatal(err)
	}
	return v.NewChain()
}

func runtimeFor(id string, p, index, maxP int) stream.Runtime {
	s, e := jobgraph.KeyGroupRange(maxP, p, index)
	return stream.Runtime{Vertex: "v", OperatorID: id, Subtask: index, Parallelism: p, MaxParallelism: maxP, KeyGroupStart: s, KeyGroupEnd: e, Attempt: 1}
}

// backendTypes are the state.backend.type values every keyed operator test runs with.
var backendTypes = []string{"hashmap", "pebble"}

// withBackend gives rt a fresh keyed state backend of the type (closed when the test ends).
func withBackend(t *testing.T, typ string, rt stream.Runtime) stream.Runtime {
	t.Helper()
	switch typ {
	case "hashmap":
		rt.KeyedBackend = state.NewHeap()
	case "pebble":
		be, err := state.OpenPebble(state.PebbleOptions{Dir: t.TempDir(), Name: rt.OperatorID})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := be.Close(); err != nil {
				t.Error(err)
			}
		})
		rt.KeyedBackend = be
	default:
		t.Fatalf("unknown backend %q", typ)
	}
	return rt
}

// snapshotOp snapshots one operator into a state file.
func snapshotOp(t *testing.T, op stream.Operator, rt stream.Runtime, id int64) []byte {
	t.Helper()
	var w snapshot.Writer
	if err := op.Snapshot(id, w.Operator(rt.OperatorID)); err != nil {
		t.Fatal(err)
	}
	return w.Encode(snapshot.Header{Vertex: rt.Vertex, Subtask: rt.Subtask, Parallelism: rt.Parallelism, MaxParallelism: rt.MaxParallelism,
		KeyGroupStart: rt.KeyGroupStart, KeyGroupEnd: rt.KeyGroupEnd, Checkpoint: id, Attempt: rt.Attempt})
}

// restoreFor builds the state reader of operator opID for rt from files.
func restoreFor(t *testing.T, rt stream.Runtime, files [][]byte) stream.StateReader {
	t.Helper()
	r := snapshot.NewRestore(rt.Subtask, rt.Parallelism, rt.KeyGroupStart, rt.KeyGroupEnd)
	for _, b := range files {
		f, err := snapshot.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	return r.Operator(rt.OperatorID)
}

func open(t *testing.T, op stream.Operator, rt stream.Runtime, r stream.StateReader) {
	t.Helper()
	if err := op.Open(context.Background(), rt, r); err != nil {
		t.Fatal(err)
	}
}
