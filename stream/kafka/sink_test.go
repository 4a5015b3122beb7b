package kafka

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

func testSink(e *kafkatest.Env, topic, prefix string, g DeliveryGuarantee) *Sink[string] {
	return &Sink[string]{Brokers: []string{e.Bootstrap}, Topic: topic, Guarantee: g, TransactionalIDPrefix: prefix,
		TransactionTimeout: time.Minute,
		Serialize:          func(v string) ([]byte, []byte, error) { return []byte(v[:1]), []byte(v), nil }}
}

func openWriter(t *testing.T, cfg *Sink[string], subtask, p int, restored *memState) *writer[string] {
	t.Helper()
	w := newWriter("kafka-out", cfg)
	var rs stream.StateReader
	if restored != nil {
		rs = restored.reader(subtask, p)
	}
	if err := w.Open(bg, runtimeOf(subtask, p), rs); err != nil {
		t.Fatalf("opening writer %d/%d: %v", subtask, p, err)
	}
	return w
}

func write(t *testing.T, w *writer[string], vals []string) {
	t.Helper()
	for _, v := range vals {
		if err := w.Process(v, 1_700_000_000_000, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotAll takes checkpoint id on every writer and returns the combined state.
func snapshotAll(t *testing.T, id int64, ws ...*writer[string]) *memState {
	t.Helper()
	st := newMemState()
	for _, w := range ws {
		if err := w.Snapshot(id, st); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func complete(t *testing.T, id int64, ws ...*writer[string]) {
	t.Helper()
	for _, w := range ws {
		if err := w.CheckpointComplete(bg, id); err != nil {
			t.Fatal(err)
		}
	}
}

// crash drops a writer the way SIGKILL does: clients gone, nothing aborted or committed.
func crash(w *writer[string]) {
	if w.txn != nil {
		w.txn.Close()
	}
	w.base.Close()
	w.cancel()
}

func committedValues(t *testing.T, e *kafkatest.Env, topic string, want int) []string {
	t.Helper()
	recs, err := e.WaitCommitted(t.Context(), topic, want)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if !r.Attrs.IsTransactional() {
			t.Fatalf("record %s was not written in a transaction", r.Value)
		}
		out = append(out, string(r.Value))
	}
	slices.Sort(out)
	return out
}

// noOpenTransactions waits until read_committed can read to the end of every partition: no
// transaction of the test's prefix is left open.
func noOpenTransactions(t *testing.T, e *kafkatest.Env, topic string) {
	t.Helper()
	adm := e.Admin(t)
	waitFor(t, "no open transactions on "+topic, func() bool {
		lso, err1 := adm.ListCommittedOffsets(bg, topic)
		hwm, err2 := adm.ListEndOffsets(bg, topic)
		if err1 != nil || err2 != nil {
			return false
		}
		same := true
		hwm.Each(func(o kadm.ListedOffset) {
			if l, ok := lso.Lookup(topic, o.Partition); !ok || l.Offset != o.Offset {
				same = false
			}
		})
		return same
	})
}

// TestSinkExactlyOnceCommitsOnCompletion: records stay invisible to read_committed until
// their checkpoint completes; a writer killed after pre-commit has its transaction
// committed by the restored writer; what it wrote after the checkpoint is aborted.
func TestSinkExactlyOnceCommitsOnCompletion(t *testing.T) {
	e := kafkatest.Require(t)
	topic := e.CreateTopic(t, 2)
	prefix := kafkatest.UniqueName(t)
	cfg := testSink(e, topic, prefix, ExactlyOnce)

	w := openWriter(t, cfg, 0, 1, nil)
	write(t, w, values("a", 0, 20))
	snapshotAll(t, 1, w)
	if recs, err := e.ReadCommitted(bg, topic); err != nil || len(recs) != 0 {
		t.Fatalf("read_committed before the checkpoint completed: %d records (err %v), want none", len(recs), err)
	}
	complete(t, 1, w)
	if got := committedValues(t, e, topic, 20); !slices.Equal(got, values("a", 0, 20)) {
		t.Fatalf("after checkpoint 1: %v", got)
	}

	// Pre-commit checkpoint 2, write more, die before the completion arrives.
	write(t, w, values("b", 0, 10))
	st := snapshotAll(t, 2, w)
	write(t, w, values("c", 0, 5))
	if err := w.txn.Flush(bg); err != nil {
		t.Fatal(err)
	}
	crash(w)

	w2 := openWriter(t, cfg, 0, 1, st)
	defer w2.Close()
	want := append(values("a", 0, 20), values("b", 0, 10)...)
	if got := committedValues(t, e, topic, 30); !slices.Equal(got, want) {
		t.Fatalf("after restore: %v", got)
	}
	noOpenTransactions(t, e, topic)
	all, err := e.ReadUncommitted(bg, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 35 {
		t.Fatalf("read_uncommitted sees %d records, want 35 (the aborted c-records too)", len(all))
	}
	if got := committedValues(t, e, topic, 30); len(got) != 30 {
		t.Fatalf("read_committed sees %d records after the abort, want 30", len(got))
	}
}

// TestSinkExactlyOnceAcrossRescales: 2 writers → restore at 3 → restore at 1, with a
// pending checkpoint at every restore and a zombie writer fenced.
func TestSinkExactlyOnceAcrossRescales(t *testing.T) {
	e := kafkatest.Require(t)
	topic := e.CreateTopic(t, 3)
	prefix := kafkatest.UniqueName(t)
	cfg := testSink(e, topic, prefix, ExactlyOnce)

	w0, w1 := openWriter(t, cfg, 0, 2, nil), openWriter(t, cfg, 1, 2, nil)
	write(t, w0, values("a", 0, 10))
	write(t, w1, values("b", 0, 10))
	st := snapshotAll(t, 1, w0, w1)
	write(t, w1, values("z", 0, 3)) // after the checkpoint: must never appear
	if err := w1.txn.Flush(bg); err != nil {
		t.Fatal(err)
	}
	crash(w0)
	zombie := w1 // not dead yet: its transaction must be fenced by the restore

	var ws []*writer[string]
	for i := range 3 {
		ws = append(ws, openWriter(t, cfg, i, 3, st))
	}
	if err := zombie.txn.EndTransaction(bg, kgo.TryCommit); err == nil {
		t.Fatal("the zombie committed its transaction after the restore fenced it")
	}
	crash(zombie)
	for i, w := range ws {
		write(t, w, values(string(rune('c'+i)), 0, 7))
	}
	st = snapshotAll(t, 5, ws...)
	for _, w := range ws {
		crash(w)
	}

	w := openWriter(t, cfg, 0, 1, st)
	write(t, w, values("f", 0, 4))
	snapshotAll(t, 6, w)
	complete(t, 6, w)
	w.Close()

	want := slices.Concat(values("a", 0, 10), values("b", 0, 10), values("c", 0, 7), values("d", 0, 7), values("e", 0, 7), values("f", 0, 4))
	slices.Sort(want)
	if got := committedValues(t, e, topic, len(want)); !slices.Equal(got, want) {
		t.Fatalf("committed %d records, want %d: %v", len(got), len(want), got)
	}
	noOpenTransactions(t, e, topic)
}

// TestSinkAtLeastOnceAndNone: both deliver everything once nothing fails; at-least-once
// has flushed everything by the end of the barrier.
func TestSinkAtLeastOnceAndNone(t *testing.T) {
	e := kafkatest.Require(t)
	for _, g := range []DeliveryGuarantee{AtLeastOnce, None} {
		t.Run(g.String(), func(t *testing.T) {
			topic := e.CreateTopic(t, 2)
			w := openWriter(t, testSink(e, topic, "", g), 0, 1, nil)
			defer w.Close()
			write(t, w, values("a", 0, 50))
			snapshotAll(t, 1, w)
			if g == AtLeastOnce {
				recs, err := e.ReadCommitted(bg, topic)
				if err != nil || len(recs) != 50 {
					t.Fatalf("after the barrier read %d records (err %v), want 50", len(recs), err)
				}
			}
			if err := w.EndInput(bg, nil); err != nil {
				t.Fatal(err)
			}
			recs, err := e.WaitCommitted(t.Context(), topic, 50)
			if err != nil || len(recs) != 50 {
				t.Fatalf("read %d records (err %v), want 50", len(recs), err)
			}
		})
	}
}

// TestSinkSubmissionChecks: an exactly-once sink is refused without checkpoints and with a
// transaction timeout not longer than the checkpoint interval; the error names job and sink.
func TestSinkSubmissionChecks(t *testing.T) {
	build := func(timeout time.Duration, g DeliveryGuarantee) *stream.Job {
		j := stream.NewJob("orders", 1, 0)
		in := stream.NumberSequenceSource(j, "numbers", stream.NumberSequence{From: 1, To: 10})
		s := stream.Map(in, "fmt", func(v int64) string { return "x" })
		ToKafka(s, "to-kafka", Sink[string]{Brokers: []string{"127.0.0.1:1"}, Topic: "t", Guarantee: g,
			TransactionalIDPrefix: "p", TransactionTimeout: timeout,
			Serialize: func(v string) ([]byte, []byte, error) { return nil, []byte(v), nil }})
		return j
	}
	tests := []struct {
		name     string
		timeout  time.Duration
		g        DeliveryGuarantee
		interval time.Duration
		want     []string
	}{
		{"ok", time.Minute, ExactlyOnce, 10 * time.Second, nil},
		{"timeout below interval", 5 * time.Second, ExactlyOnce, 30 * time.Second,
			[]string{`job "orders"`, `kafka sink "to-kafka"`, "transaction timeout 5s is not longer than the checkpoint interval 30s"}},
		{"no checkpoints", time.Minute, ExactlyOnce, 0, []string{`job "orders"`, "checkpoints are off"}},
		{"at-least-once without checkpoints", time.Minute, AtLeastOnce, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := build(tc.timeout, tc.g).CheckSubmission(stream.Submission{CheckpointInterval: tc.interval})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			mustContain(t, err, tc.want...)
		})
	}
	j := stream.NewJob("orders", 1, 0)
	in := stream.NumberSequenceSource(j, "numbers", stream.NumberSequence{From: 1, To: 10})
	ToKafka(stream.Map(in, "fmt", func(v int64) string { return "x" }), "to-kafka", Sink[string]{Topic: "t", Guarantee: ExactlyOnce})
	_, err := j.Vertices()
	mustContain(t, err, `job "orders", kafka sink "to-kafka"`, "no Brokers", "TransactionalIDPrefix", "no Serialize")
	if !strings.Contains(err.Error(), "no Brokers") {
		t.Fatal(err)
	}
}
