package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// TestSinkUnauthorisedTransactionalID: on the broker's SASL listener, a user allowed to
// write the topic but not to use the sink's transactional ids cannot open the sink; the
// error names the sink, the id and the missing grant. With the grant it opens and commits.
func TestSinkUnauthorisedTransactionalID(t *testing.T) {
	e := kafkatest.RequireSASL(t)
	topic := e.CreateTopic(t, 1)
	e.Grant(t, kadm.NewACLs().Allow(e.Principal()).Topics(topic).Operations(kadm.OpWrite, kadm.OpDescribe, kadm.OpRead))
	allowed := kafkatest.UniqueName(t) + "-ok"
	e.Grant(t, kadm.NewACLs().Allow(e.Principal()).TransactionalIDs(allowed).
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite, kadm.OpDescribe))

	cfg := testSink(e, topic, kafkatest.UniqueName(t)+"-denied", ExactlyOnce)
	cfg.Brokers, cfg.ClientOptions = []string{e.SASLBootstrap}, e.SASLOpts()
	w := newWriter("kafka-out", cfg)
	err := w.Open(bg, runtimeOf(0, 1), nil)
	w.Close()
	mustContain(t, err, `kafka sink "kafka-out" (subtask 0, exactly-once)`, cfg.TransactionalIDPrefix+"-0-1",
		"is not authorized", "WRITE and DESCRIBE on transactional ids with the prefix", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED")

	cfg.TransactionalIDPrefix = allowed
	w = openWriter(t, cfg, 0, 1, nil)
	defer w.Close()
	write(t, w, values("a", 0, 3))
	st := stream.StateWriter(newMemState())
	if err := w.Snapshot(1, st); err != nil {
		t.Fatal(err)
	}
	complete(t, 1, w)
	if got := committedValues(t, e, topic, 3); len(got) != 3 {
		t.Fatalf("the authorized sink committed %v", got)
	}
}
