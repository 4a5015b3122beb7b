package examples

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/stream/kafka"
)

// KafkaCountName is the registered name of the Kafka counting job.
const KafkaCountName = "KafkaCount"

// KafkaKeyCount is a key and how many input records carried it so far.
type KafkaKeyCount struct {
	Key   string
	Count int64
}

// String is the output record's value: "key,count".
func (k KafkaKeyCount) String() string { return k.Key + "," + strconv.FormatInt(k.Count, 10) }

type kafkaKeyCountCodec struct{}

func (kafkaKeyCountCodec) Append(dst []byte, v KafkaKeyCount) []byte {
	return stream.Int64Codec{}.Append(stream.AppendString(dst, v.Key), v.Count)
}

func (kafkaKeyCountCodec) Decode(src []byte) (KafkaKeyCount, error) {
	d := stream.NewDecoder(src)
	v := KafkaKeyCount{Key: d.String(), Count: d.Varint()}
	if d.Err() != nil {
		return v, fmt.Errorf("decoding KafkaKeyCount: %w", d.Err())
	}
	return v, nil
}

type kafkaArgs struct {
	brokers, input, output, group, prefix, guarantee string
	saslPlain                                        string
	parallelism, maxParallel                         int
	discovery, txnTimeout                            time.Duration
}

func parseKafkaArgs(args []string) (kafkaArgs, error) {
	a := kafkaArgs{}
	fs := flag.NewFlagSet(KafkaCountName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.brokers, "brokers", "", "bootstrap servers, host:port[,host:port...]")
	fs.StringVar(&a.input, "input", "", "topic to read (each record's value is a key)")
	fs.StringVar(&a.output, "output", "", "topic to write \"key,count\" records to (keyed by key)")
	fs.StringVar(&a.group, "group", "", "consumer group the checkpointed offsets are committed to (default: the job name)")
	fs.StringVar(&a.prefix, "transactional-id-prefix", "", "prefix of the sink's transactional ids (default: <output>-tide)")
	fs.StringVar(&a.guarantee, "guarantee", "exactly-once", "exactly-once, at-least-once or none")
	fs.StringVar(&a.saslPlain, "sasl-plain", "", "USER:PASSWORD to authenticate with SASL/PLAIN (default: none)")
	fs.DurationVar(&a.discovery, "discovery-interval", 10*time.Second, "how often new partitions are looked for")
	fs.DurationVar(&a.txnTimeout, "transaction-timeout", kafka.DefaultTransactionTimeout, "Kafka transaction timeout (exactly-once)")
	fs.IntVar(&a.parallelism, "parallelism", 1, "configured parallelism")
	fs.IntVar(&a.maxParallel, "max-parallelism", 0, "maxParallelism (number of key groups; 0: default)")
	if err := fs.Parse(args); err != nil {
		return a, fmt.Errorf("job %s: %w", KafkaCountName, err)
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("job %s: unexpected argument %q", KafkaCountName, fs.Arg(0))
	}
	if a.brokers == "" || a.input == "" || a.output == "" {
		return a, fmt.Errorf("job %s: --brokers, --input and --output are required", KafkaCountName)
	}
	if a.saslPlain != "" && !strings.Contains(a.saslPlain, ":") {
		return a, fmt.Errorf("job %s: --sasl-plain wants USER:PASSWORD", KafkaCountName)
	}
	if a.group == "" {
		a.group = KafkaCountName
	}
	if a.prefix == "" {
		a.prefix = a.output + "-tide"
	}
	return a, nil
}

// ParseGuarantee reads "exactly-once", "at-least-once" or "none".
func ParseGuarantee(s string) (kafka.DeliveryGuarantee, error) {
	for _, g := range []kafka.DeliveryGuarantee{kafka.ExactlyOnce, kafka.AtLeastOnce, kafka.None} {
		if s == g.String() {
			return g, nil
		}
	}
	return 0, fmt.Errorf("guarantee %q: want exactly-once, at-least-once or none", s)
}

// BuildKafkaCount builds the Kafka counting job: every record of --input (its value is a
// key) is counted per key, and the key's running count goes to --output as the record
// "key,count" with the key as record key, exactly once by default: a read_committed reader
// of --output sees, for each key, the counts 1..n once each and in order.
func BuildKafkaCount(args []string) (*stream.Job, error) {
	a, err := parseKafkaArgs(args)
	if err != nil {
		return nil, err
	}
	g, err := ParseGuarantee(a.guarantee)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", KafkaCountName, err)
	}
	brokers := strings.Split(a.brokers, ",")
	var opts []kgo.Opt
	if a.saslPlain != "" {
		user, pass, _ := strings.Cut(a.saslPlain, ":")
		opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
	}
	job := stream.NewJob(KafkaCountName, a.parallelism, a.maxParallel)
	keys := kafka.FromKafka(job, "kafka-in", kafka.Source[string]{
		Brokers: brokers, Topics: []string{a.input}, GroupID: a.group, DiscoveryInterval: a.discovery,
		Deserialize:   func(r kafka.Record) (string, error) { return string(r.Value), nil },
		ClientOptions: opts,
	})
	counts := stream.Aggregate(stream.KeyBy(keys, func(k string) string { return k }), "count",
		stream.Aggregator[string, string, int64, KafkaKeyCount]{
			Add:    func(n int64, _ string) int64 { return n + 1 },
			Result: func(k string, n int64) KafkaKeyCount { return KafkaKeyCount{Key: k, Count: n} },
		}, stream.EmitEveryUpdate).WithCodec(kafkaKeyCountCodec{})
	kafka.ToKafka(counts, "kafka-out", kafka.Sink[KafkaKeyCount]{
		Brokers: brokers, Topic: a.output, Guarantee: g, TransactionalIDPrefix: a.prefix, TransactionTimeout: a.txnTimeout,
		Serialize:     func(c KafkaKeyCount) ([]byte, []byte, error) { return []byte(c.Key), []byte(c.String()), nil },
		ClientOptions: opts,
	})
	return job, nil
}
