package kafka

import (
	"testing"

	"github.com/tidestream/tide/stream"
)

func FuzzDecodeSplit(f *testing.F) {
	f.Add(partitionSplit{Topic: "orders", Partition: 3, Offset: 42}.encode().Data)
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSplit(stream.Split{ID: "x", Data: b})
		if err != nil {
			return
		}
		again, err := decodeSplit(s.encode())
		if err != nil || again != s {
			t.Fatalf("%+v does not round-trip: %+v, %v", s, again, err)
		}
	})
}

func FuzzDecodeEnumeratorState(f *testing.F) {
	e, _ := newEnumerator("s", enumConfig{}, nil, 2)
	e.known[topicPartition{"a", 0}] = true
	e.pending[topicPartition{"a", 1}] = partitionSplit{"a", 1, 7}
	e.known[topicPartition{"a", 1}] = true
	f.Add(e.encodeState())
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := newEnumerator("s", enumConfig{}, b, 2)
		if err != nil {
			return
		}
		for tp := range e.pending {
			if !e.known[tp] {
				t.Fatalf("pending %v not known", tp)
			}
		}
	})
}

func FuzzDecodeSinkState(f *testing.F) {
	f.Add(committable{TransactionalID: "p-0-3", ProducerID: 9, Epoch: 2, Checkpoint: 3, Subtask: 0}.item().Data)
	f.Add(subtaskMeta{Subtask: 1, Next: 4, Checkpoint: 3, Parallelism: 2}.item().Data)
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := committableFromItem(stream.ListItem{ID: "x", Data: b}); err == nil {
			if again, err := committableFromItem(c.item()); err != nil || again != c {
				t.Fatalf("%+v does not round-trip", c)
			}
		}
		if m, err := metaFromItem(stream.ListItem{ID: "x", Data: b}); err == nil {
			if m.Subtask < 0 || m.Next < 1 {
				t.Fatalf("accepted %+v", m)
			}
		}
	})
}
