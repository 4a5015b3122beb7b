package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/test/kafka/kafkatest"
)

func lingerOf(t *testing.T, cl *kgo.Client) time.Duration {
	t.Helper()
	d, ok := cl.OptValue(kgo.ProducerLinger).(time.Duration)
	if !ok {
		t.Fatalf("the client has no linger: %v", cl.OptValue(kgo.ProducerLinger))
	}
	return d
}

// openWithBufferTimeout opens the sink's writer as subtask 0 of 1 with the given
// execution.buffer-timeout; it is closed when the test ends.
func openWithBufferTimeout(t *testing.T, cfg *Sink[string], timeout time.Duration) *writer[string] {
	t.Helper()
	w := newWriter("kafka-out", cfg)
	rt := runtimeOf(0, 1)
	rt.BufferTimeout = timeout
	if err := w.Open(bg, rt, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestSinkLingerFollowsBufferTimeout: the producer lingers as execution.buffer-timeout says
// (0: every record at once; d: at most d; -1: only full batches, up to franz-go's one-minute
// maximum), not franz-go's fixed 10 ms; a linger the user set in ClientOptions wins. No broker
// is needed: clients connect on first use.
func TestSinkLingerFollowsBufferTimeout(t *testing.T) {
	for _, c := range []struct {
		timeout, want time.Duration
		user          []kgo.Opt
	}{
		{0, 0, nil},
		{5 * time.Millisecond, 5 * time.Millisecond, nil},
		{100 * time.Millisecond, 100 * time.Millisecond, nil},
		{-1, time.Minute, nil},
		{2 * time.Minute, time.Minute, nil},
		{0, 7 * time.Millisecond, []kgo.Opt{kgo.ProducerLinger(7 * time.Millisecond)}},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.timeout, len(c.user)), func(t *testing.T) {
			cfg := &Sink[string]{Brokers: []string{"127.0.0.1:1"}, Topic: "t", Guarantee: None, ClientOptions: c.user,
				Serialize: func(v string) ([]byte, []byte, error) { return nil, []byte(v), nil }}
			w := openWithBufferTimeout(t, cfg, c.timeout)
			if got := lingerOf(t, w.base); got != c.want {
				t.Fatalf("buffer timeout %s: linger %s, want %s", c.timeout, got, c.want)
			}
		})
	}
}

// TestSinkBufferTimeoutReload: a reloaded execution.buffer-timeout reaches the sink while it
// runs. At-least-once: what the old client held is on the broker when SetBufferTimeout
// returns (before any barrier), the new client lingers by the new value, and records written
// after it arrive without a barrier. Exactly-once: the open transaction keeps its client; the
// next one, opened at the barrier, lingers by the new value, and everything commits once.
func TestSinkBufferTimeoutReload(t *testing.T) {
	e := kafkatest.Require(t)
	t.Run("at-least-once", func(t *testing.T) {
		topic := e.CreateTopic(t, 2)
		w := openWithBufferTimeout(t, testSink(e, topic, "", AtLeastOnce), -1)
		write(t, w, values("a", 0, 50))
		if err := w.SetBufferTimeout(0); err != nil {
			t.Fatal(err)
		}
		recs, err := e.ReadCommitted(bg, topic)
		if err != nil || len(recs) != 50 {
			t.Fatalf("after the reload read %d records (err %v), want the 50 written before it", len(recs), err)
		}
		if got := lingerOf(t, w.base); got != 0 {
			t.Fatalf("after the reload to 0 the client lingers %s", got)
		}
		write(t, w, values("b", 0, 50))
		recs, err = e.WaitCommitted(t.Context(), topic, 100)
		if err != nil || len(recs) != 100 {
			t.Fatalf("read %d records (err %v), want 100 without a barrier", len(recs), err)
		}
	})
	t.Run("exactly-once", func(t *testing.T) {
		topic := e.CreateTopic(t, 2)
		w := openWithBufferTimeout(t, testSink(e, topic, "reload-"+topic, ExactlyOnce), 100*time.Millisecond)
		write(t, w, values("a", 0, 20))
		if err := w.SetBufferTimeout(0); err != nil {
			t.Fatal(err)
		}
		if got := lingerOf(t, w.txn); got != 100*time.Millisecond {
			t.Fatalf("the open transaction's client lingers %s, want it kept at 100ms", got)
		}
		snapshotAll(t, 1, w)
		if got := lingerOf(t, w.txn); got != 0 {
			t.Fatalf("the transaction after the barrier lingers %s, want 0", got)
		}
		write(t, w, values("b", 0, 20))
		snapshotAll(t, 2, w)
		complete(t, 2, w)
		if got := committedValues(t, e, topic, 40); len(got) != 40 {
			t.Fatalf("committed %d records, want 40", len(got))
		}
	})
}
