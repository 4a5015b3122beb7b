package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
	"github.com/tidestream/tide/tm/snapshot"
)

// TestKeyedRecordsCarryTheirKeyGroup plays the producer of a keyed Reduce over the data
// plane (maxParallelism 300, so key groups take one and two varint bytes): records that
// carry a key group, with and without timestamp, are kept in the checkpoint under the key
// group they carried (the consumer does not hash their keys again), a record without one
// under its key's hash; with VerifyCarriedKeyGroups on, a carried key group that is not
// the key's fails the subtask with an error naming both.
func TestKeyedRecordsCarryTheirKeyGroup(t *testing.T) {
	const maxP = 300
	job := stream.NewJob("carried", 1, maxP)
	nums := stream.NumberSequenceSource(job, "src", stream.NumberSequence{From: 1, To: 10})
	stream.Reduce(stream.KeyBy(nums, func(v int64) int64 { return v }), "count", func(acc, v int64) int64 { return acc + v })
	vs, err := job.Vertices()
	if err != nil {
		t.Fatal(err)
	}
	src, dst := vs[0], vs[1]
	// Each key carries a key group it does not hash to (hashes differ from them below).
	type sent struct {
		key     int64
		ts      int64
		carried int // -1: a record without key group
	}
	recs := []sent{
		{key: 1, ts: noTimestamp, carried: 5},
		{key: 2, ts: noTimestamp, carried: 200},
		{key: 3, ts: 1700000000000, carried: 7},
		{key: 4, ts: -5, carried: 299},
		{key: 5, ts: noTimestamp, carried: -1},
	}
	for _, r := range recs {
		if r.carried == stream.KeyGroupOf(r.key, maxP) {
			t.Fatalf("key %d hashes to the key group it carries (%d): pick another", r.key, r.carried)
		}
	}
	encode := func(r sent) []byte {
		if r.carried < 0 {
			return src.Outputs[0].Append(appendRecordHeader(nil, r.ts), r.key)
		}
		return src.Outputs[0].Append(appendKeyedRecordHeader(nil, r.ts, r.carried), r.key)
	}

	// run deploys the consumer as attempt, sends msgs as its producer and returns the
	// reporter.
	run := func(t *testing.T, attempt int64, msgs ...[]byte) (alignReporter, storage.Storage) {
		ctx := context.Background()
		ex, plane, rep, st := alignExecutor(t, job)
		err := ex.Deploy(ctx, DeploySpec{Attempt: attempt, CheckpointingEnabled: true,
			Vertices:  []VertexParallelism{{Vertex: src.ID, Parallelism: 1, MaxParallelism: maxP}, {Vertex: dst.ID, Parallelism: 1, MaxParallelism: maxP}},
			Subtasks:  []Subtask{{Vertex: dst.ID}},
			Locations: []Location{{Vertex: src.ID, DataAddress: plane.Addr()}, {Vertex: dst.ID, DataAddress: plane.Addr()}},
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := plane.OpenOutput(ctx, netplane.ChannelID{Attempt: attempt, Edge: stream.EdgeName(src.ID, dst.ID)}, plane.Addr())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := out.Write(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return rep, st
	}

	t.Run("kept under the carried key group", func(t *testing.T) {
		stream.VerifyCarriedKeyGroups(false)
		defer stream.VerifyCarriedKeyGroups(true) // as TestMain set it
		var msgs [][]byte
		for _, r := range recs {
			msgs = append(msgs, encode(r))
		}
		rep, st := run(t, 1, append(msgs, appendBarrier(nil, 1, 1))...)
		if id := receive(t, rep.acks, "ack of checkpoint 1"); id != 1 {
			t.Fatalf("got ack %d, want 1", id)
		}
		f := readState(t, st, CheckpointDir("j", 1)+"/"+StateFileName(dst.ID, 0))
		r := snapshot.NewRestore(0, 1, 0, maxP-1)
		if err := r.Add(f); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		err := r.Operator(dst.NewChain()[0].ID).Keyed("value", func(kg int, key, _ []byte) error {
			got[fmt.Sprintf("%x", key)] = kg
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(recs) {
			t.Fatalf("checkpoint holds %d keys, want %d: %v", len(got), len(recs), got)
		}
		for _, rec := range recs {
			want := rec.carried
			if want < 0 {
				want = stream.KeyGroupOf(rec.key, maxP)
			}
			k := fmt.Sprintf("%x", binary.AppendVarint(nil, rec.key)) // the keyed state encoding of an int64 key
			if got[k] != want {
				t.Errorf("key %d (ts %d, carried %d) kept in key group %d, want %d", rec.key, rec.ts, rec.carried, got[k], want)
			}
		}
	})

	t.Run("verified", func(t *testing.T) {
		stream.VerifyCarriedKeyGroups(true)
		rep, _ := run(t, 2, encode(recs[1]))
		for {
			s := receive(t, rep.states, "the subtask to fail")
			if strings.HasPrefix(s, "FAILED") {
				if want := fmt.Sprintf("key 2 came with key group 200 but hashes to %d", stream.KeyGroupOf(int64(2), maxP)); !strings.Contains(s, want) {
					t.Fatalf("subtask went %s, want an error containing %q", s, want)
				}
				return
			}
		}
	})
}
