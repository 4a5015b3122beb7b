package kafka

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
)

// DeliveryGuarantee is what a Kafka sink promises about the records it writes.
type DeliveryGuarantee uint8

const (
	// None writes records and never waits for them: a failure can lose what was in flight.
	None DeliveryGuarantee = iota
	// AtLeastOnce flushes every record at each checkpoint barrier: a restore may write
	// records a second time, never loses one.
	AtLeastOnce
	// ExactlyOnce writes each checkpoint's records in one Kafka transaction, committed when
	// the checkpoint completes; read_committed consumers see each record once.
	ExactlyOnce
)

func (g DeliveryGuarantee) String() string {
	switch g {
	case None:
		return "none"
	case AtLeastOnce:
		return "at-least-once"
	case ExactlyOnce:
		return "exactly-once"
	}
	return fmt.Sprintf("DeliveryGuarantee(%d)", uint8(g))
}

// DefaultTransactionTimeout is Sink.TransactionTimeout unless set: long enough for a
// checkpoint interval of minutes plus a restart, and under the broker's default
// transaction.max.timeout.ms (15 minutes).
const DefaultTransactionTimeout = 10 * time.Minute

// Sink configures ToKafka.
type Sink[T any] struct {
	// Brokers are the bootstrap servers, host:port.
	Brokers []string
	// Topic receives the records.
	Topic string
	// Serialize gives a value's record key (may be nil: spread over partitions) and value.
	// Records with a key go to the partition Kafka's default partitioner picks for it, so
	// one key's records stay in order.
	Serialize func(T) (key, value []byte, err error)
	// Guarantee is None, AtLeastOnce or ExactlyOnce.
	Guarantee DeliveryGuarantee
	// TransactionalIDPrefix names the sink's transactions (ExactlyOnce, required): ids are
	// <prefix>-<subtask>-<n>. It must be unique among all jobs writing to the cluster and
	// stay the same across restarts of the job, or leftover transactions are not aborted.
	TransactionalIDPrefix string
	// TransactionTimeout is how long the broker keeps a transaction open before aborting it
	// (0: DefaultTransactionTimeout). It must exceed the checkpoint interval plus the time a
	// restart takes; the job is refused if it is not longer than the interval, and the
	// broker refuses values above its transaction.max.timeout.ms.
	TransactionTimeout time.Duration
	// ClientOptions are added to every franz-go client of the sink (SASL, TLS, ...).
	ClientOptions []kgo.Opt
}

// ToKafka writes the stream to Kafka. A bad configuration fails the job's build; an
// exactly-once sink without checkpoints, or with a transaction timeout not longer than the
// checkpoint interval, fails its submission; both errors name the job and the sink.
func ToKafka[T any](s stream.DataStream[T], name string, sink Sink[T]) {
	j := s.Job()
	if sink.TransactionTimeout == 0 {
		sink.TransactionTimeout = DefaultTransactionTimeout
	}
	if err := sink.validate(); err != nil {
		j.Fail(fmt.Errorf("job %q, kafka sink %q: %w", j.Name(), name, err))
	}
	j.AddSubmitCheck(func(sub stream.Submission) error { return sink.checkSubmission(name, sub) })
	stream.Sink(s, name, func() stream.Operator { return newWriter(name, &sink) })
}

func (s *Sink[T]) validate() error {
	var errs []error
	if len(s.Brokers) == 0 {
		errs = append(errs, errors.New("no Brokers"))
	}
	if s.Topic == "" {
		errs = append(errs, errors.New("no Topic"))
	}
	if s.Serialize == nil {
		errs = append(errs, errors.New("no Serialize"))
	}
	if s.Guarantee > ExactlyOnce {
		errs = append(errs, fmt.Errorf("unknown guarantee %s", s.Guarantee))
	}
	if s.Guarantee == ExactlyOnce && s.TransactionalIDPrefix == "" {
		errs = append(errs, errors.New("exactly-once needs a TransactionalIDPrefix"))
	}
	if s.TransactionTimeout < time.Second {
		errs = append(errs, fmt.Errorf("TransactionTimeout %s, want at least 1s", s.TransactionTimeout))
	}
	return errors.Join(errs...)
}

func (s *Sink[T]) checkSubmission(name string, sub stream.Submission) error {
	if s.Guarantee != ExactlyOnce {
		return nil
	}
	if sub.CheckpointInterval <= 0 {
		return fmt.Errorf("kafka sink %q is exactly-once, which commits its transactions when checkpoints complete, and checkpoints are off: set execution.checkpointing.interval and state.checkpoints.dir, or use at-least-once", name)
	}
	if s.TransactionTimeout <= sub.CheckpointInterval {
		return fmt.Errorf("kafka sink %q: transaction timeout %s is not longer than the checkpoint interval %s (execution.checkpointing.interval): the broker would abort transactions before their checkpoint completes and their records would be lost; raise TransactionTimeout well above the interval plus a restart (at most the broker's transaction.max.timeout.ms, 15m by default) or checkpoint more often",
			name, s.TransactionTimeout, sub.CheckpointInterval)
	}
	return nil
}
