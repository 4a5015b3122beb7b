package kafkatest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBrokerTransactions checks the harness's broker does what the connector tests rely on:
// topics, transactions with read_committed isolation, aborted records hidden.
func TestBrokerTransactions(t *testing.T) {
	e := Require(t)
	topic := e.CreateTopic(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	txn := func(id string, n int, commit bool) {
		cl, err := e.Client(kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			cl.Produce(ctx, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, "%s-%d", id, i)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("ending transaction %s (commit %v): %v", id, commit, err)
		}
	}
	txn(topic+"-a", 4, true)
	txn(topic+"-b", 3, false)
	txn(topic+"-c", 2, true)

	committed, err := e.WaitCommitted(ctx, topic, 6)
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.ReadUncommitted(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(committed) != 6 || len(all) != 9 {
		t.Fatalf("read_committed saw %d records (want 6), read_uncommitted %d (want 9)", len(committed), len(all))
	}
	for _, r := range committed {
		if !r.Attrs.IsTransactional() {
			t.Fatalf("record %s not transactional", r.Value)
		}
		if string(r.Value[len(topic)+1]) == "b" {
			t.Fatalf("read_committed returned aborted record %s", r.Value)
		}
	}
}
