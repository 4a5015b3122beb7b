package kafkatest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var topicSeq atomic.Int64

// UniqueName is a topic (or transactional id prefix, group) name no other test uses on the
// shared broker: the test's name, the process id and a counter.
func UniqueName(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
	return fmt.Sprintf("%s-%d-%d-%d", name, time.Now().UnixNano()%1e6, topicSeq.Add(1), pid)
}

// Admin is a client plus its kadm view, closed when the test ends.
func (e *Env) Admin(t testing.TB) *kadm.Client {
	t.Helper()
	cl, err := e.Client()
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// CreateTopic creates a topic with partitions partitions (replication factor 1) and returns
// its name, unique to the test.
func (e *Env) CreateTopic(t testing.TB, partitions int) string {
	t.Helper()
	name := UniqueName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := e.Admin(t).CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s with %d partitions: %v", name, partitions, err)
	}
	return name
}

// Produce writes records synchronously (non-transactional, acks=all).
func (e *Env) Produce(ctx context.Context, recs ...*kgo.Record) error {
	cl, err := e.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(ctx, recs...).FirstErr()
}
