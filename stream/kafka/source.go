package kafka

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
)

// Defaults of a Source.
const (
	DefaultDiscoveryInterval = 30 * time.Second
	DefaultStartupTimeout    = 30 * time.Second
)

// Client settings of a Source's franz-go clients that differ from franz-go's defaults
// (ClientOptions may set them again).
const (
	// fetchMaxWait is how long a reader's fetch waits at the broker for records: Kafka's
	// fetch.max.wait.ms default (franz-go's kgo.FetchMaxWait is 5 s).
	fetchMaxWait = 500 * time.Millisecond
	// discoveryMetadataAge is how long the enumerator trusts the metadata it read
	// (franz-go's kgo.MetadataMinAge is 5 s).
	discoveryMetadataAge = 250 * time.Millisecond
)

// Source configures FromKafka.
type Source[T any] struct {
	// Brokers are the bootstrap servers, host:port.
	Brokers []string
	// Topics lists the topics to read; or TopicPattern selects them (re-evaluated at every
	// discovery, so matching topics created later are picked up). Exactly one is set.
	Topics       []string
	TopicPattern *regexp.Regexp
	// GroupID is the consumer group whose committed offsets Committed() starts from and to
	// which checkpointed offsets are committed when a checkpoint completes. Optional.
	GroupID string
	// StartingOffsets applies to the partitions found at the job's first start (default
	// Earliest()).
	StartingOffsets StartingOffsets
	// DiscoveryInterval is how often the enumerator looks for new topics and partitions
	// (0: DefaultDiscoveryInterval; negative: only at start).
	DiscoveryInterval time.Duration
	// StartupTimeout bounds the first discovery, which runs when the AM deploys the job: an
	// unreachable cluster or a missing topic fails the job's attempt after it (0:
	// DefaultStartupTimeout).
	StartupTimeout time.Duration
	// ReadUncommitted also returns records of open and aborted transactions (default:
	// read_committed, so the output of an exactly-once producer is read exactly once).
	ReadUncommitted bool
	// Watermarks, when set, makes the readers emit event-time watermarks from the records'
	// Kafka timestamps, one per partition.
	Watermarks *PartitionWatermarks
	// Deserialize turns a record into the stream's value; an error fails the subtask, naming
	// the partition and offset.
	Deserialize func(Record) (T, error)
	// ClientOptions are added to every franz-go client of the source (SASL, TLS, ...).
	ClientOptions []kgo.Opt
}

// PartitionWatermarks configures per-partition watermarks: a partition's watermark trails
// the largest timestamp read from it by MaxOutOfOrderness; the reader's watermark is the
// smallest over its partitions that had a record within IdleTimeout (0: never idle).
type PartitionWatermarks struct {
	MaxOutOfOrderness time.Duration
	IdleTimeout       time.Duration
}

// FromKafka adds a Kafka source named name to the job. A bad configuration fails the job's
// build with an error naming the source.
func FromKafka[T any](j *stream.Job, name string, src Source[T]) stream.DataStream[T] {
	if err := src.validate(); err != nil {
		j.Fail(fmt.Errorf("job %q, kafka source %q: %w", j.Name(), name, err))
	}
	src.fillDefaults()
	return stream.FromSource(j, name, &splitSource[T]{name: name, cfg: src}, stream.NoWatermarks[T]())
}

func (s *Source[T]) validate() error {
	var errs []error
	if len(s.Brokers) == 0 {
		errs = append(errs, errors.New("no Brokers"))
	}
	if (len(s.Topics) == 0) == (s.TopicPattern == nil) {
		errs = append(errs, errors.New("set exactly one of Topics and TopicPattern"))
	}
	for _, t := range s.Topics {
		if t == "" {
			errs = append(errs, errors.New("an empty topic name in Topics"))
		}
	}
	if s.Deserialize == nil {
		errs = append(errs, errors.New("no Deserialize"))
	}
	if s.StartingOffsets.kind == startCommitted && s.GroupID == "" {
		errs = append(errs, errors.New("Committed() starting offsets need a GroupID"))
	}
	if w := s.Watermarks; w != nil && (w.MaxOutOfOrderness < 0 || w.IdleTimeout < 0) {
		errs = append(errs, errors.New("negative MaxOutOfOrderness or IdleTimeout"))
	}
	return errors.Join(errs...)
}

func (s *Source[T]) fillDefaults() {
	if s.DiscoveryInterval == 0 {
		s.DiscoveryInterval = DefaultDiscoveryInterval
	}
	if s.StartupTimeout <= 0 {
		s.StartupTimeout = DefaultStartupTimeout
	}
}

// describe names the source's topics for errors.
func (s *Source[T]) describe() string {
	if s.TopicPattern != nil {
		return fmt.Sprintf("topics matching %q", s.TopicPattern.String())
	}
	return fmt.Sprintf("topics %q", s.Topics)
}

// splitSource is the stream.SplitSource of a Source.
type splitSource[T any] struct {
	name string
	cfg  Source[T]
}

func (s *splitSource[T]) CreateEnumerator(restored []byte, parallelism int) (stream.SplitEnumerator, error) {
	return newEnumerator(s.name, enumConfig{
		brokers: s.cfg.Brokers, topics: s.cfg.Topics, pattern: s.cfg.TopicPattern, group: s.cfg.GroupID,
		start: s.cfg.StartingOffsets, discovery: s.cfg.DiscoveryInterval, startup: s.cfg.StartupTimeout,
		describe: s.cfg.describe(), opts: s.cfg.ClientOptions,
	}, restored, parallelism)
}

func (s *splitSource[T]) CreateReader(rc stream.ReaderContext) (stream.SourceReader, error) {
	return newReader(s.name, &s.cfg, rc), nil
}
