package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
)

type enumConfig struct {
	brokers   []string
	topics    []string
	pattern   *regexp.Regexp
	group     string
	start     StartingOffsets
	discovery time.Duration
	startup   time.Duration
	describe  string
	opts      []kgo.Opt
}

// enumerator discovers partitions and hands each to its owning reader. Its state is every
// partition it knows (so a restored enumerator never assigns one twice) and the splits not
// yet handed out. The AM's loop calls it; the discovery goroutine adds splits; a mutex
// keeps them apart.
type enumerator struct {
	name        string
	cfg         enumConfig
	parallelism int
	log         *slog.Logger

	mu       sync.Mutex
	known    map[topicPartition]bool
	pending  map[topicPartition]partitionSplit
	restored bool
	client   *kgo.Client
}

func newEnumerator(name string, cfg enumConfig, restored []byte, parallelism int) (*enumerator, error) {
	e := &enumerator{
		name: name, cfg: cfg, parallelism: max(parallelism, 1),
		log:   slog.Default().With("source", name),
		known: map[topicPartition]bool{}, pending: map[topicPartition]partitionSplit{},
	}
	if restored != nil {
		if err := e.decodeState(restored); err != nil {
			return nil, fmt.Errorf("kafka source %q: restoring its enumerator: %w", name, err)
		}
		e.restored = true
	}
	return e, nil
}

// Start runs the first discovery (bounded by the startup timeout; its failure fails the
// attempt) and then discovers periodically until ctx ends.
func (e *enumerator) Start(ctx context.Context) error {
	// kadm (topics for discovery, leaders for offsets) answers from the client's metadata
	// cache, kept for MetadataMinAge: a short one lets each discovery see new partitions.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.cfg.brokers...), kgo.MetadataMinAge(discoveryMetadataAge)}, e.cfg.opts...)...)
	if err != nil {
		return fmt.Errorf("kafka source %q: %w", e.name, err)
	}
	e.client = cl
	first, cancel := context.WithTimeout(ctx, e.cfg.startup)
	defer cancel()
	if err := e.discover(first, !e.restored); err != nil {
		cl.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", e.cfg.startup, err)
		}
		return fmt.Errorf("kafka source %q: discovering %s on brokers %s: %w", e.name, e.cfg.describe, strings.Join(e.cfg.brokers, ","), err)
	}
	go e.discoverPeriodically(ctx)
	return nil
}

func (e *enumerator) discoverPeriodically(ctx context.Context) {
	defer e.client.Close()
	if e.cfg.discovery < 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(e.cfg.discovery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		dctx, cancel := context.WithTimeout(ctx, max(e.cfg.discovery, 10*time.Second))
		err := e.discover(dctx, false)
		cancel()
		if err != nil && ctx.Err() == nil {
			e.log.Warn("Kafka partition discovery failed; trying again at the next interval", "topics", e.cfg.describe, "err", err)
		}
	}
}

// discover lists the topics' partitions and queues a split for every new one, starting at
// the configured starting offsets (initial) or at the partition's earliest offset.
func (e *enumerator) discover(ctx context.Context, initial bool) error {
	adm := kadm.NewClient(e.client)
	var details kadm.TopicDetails
	var err error
	if e.cfg.pattern != nil {
		details, err = adm.ListTopics(ctx)
	} else {
		details, err = adm.ListTopics(ctx, e.cfg.topics...)
	}
	if err != nil {
		return err
	}
	var fresh []topicPartition
	var errs []error
	for _, name := range details.Names() {
		d := details[name]
		if e.cfg.pattern != nil && (d.IsInternal || !e.cfg.pattern.MatchString(name)) {
			continue
		}
		if d.Err != nil {
			if errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				errs = append(errs, fmt.Errorf("topic %q does not exist", name))
			} else {
				errs = append(errs, fmt.Errorf("topic %q: %w", name, d.Err))
			}
			continue
		}
		for _, p := range d.Partitions.Numbers() {
			tp := topicPartition{name, p}
			e.mu.Lock()
			seen := e.known[tp]
			e.mu.Unlock()
			if !seen {
				fresh = append(fresh, tp)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(fresh) == 0 {
		return nil
	}
	start := Earliest()
	if initial {
		start = e.cfg.start
	}
	offsets, err := resolveOffsets(ctx, adm, e.cfg.group, start, fresh)
	if err != nil {
		return fmt.Errorf("starting offsets (%s): %w", start, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tp := range fresh {
		if e.known[tp] {
			continue
		}
		e.known[tp] = true
		e.pending[tp] = partitionSplit{Topic: tp.Topic, Partition: tp.Partition, Offset: offsets[tp]}
	}
	e.log.Info("Kafka partitions discovered", "new", len(fresh), "known", len(e.known), "start", start.String())
	return nil
}

// resolveOffsets turns a StartingOffsets into concrete offsets for the partitions.
func resolveOffsets(ctx context.Context, adm *kadm.Client, group string, start StartingOffsets, tps []topicPartition) (map[topicPartition]int64, error) {
	topicSet := map[string]bool{}
	for _, tp := range tps {
		topicSet[tp.Topic] = true
	}
	topics := make([]string, 0, len(topicSet))
	for t := range topicSet {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	out := map[topicPartition]int64{}
	listed := func(kind startKind, need []topicPartition) error {
		var lo kadm.ListedOffsets
		var err error
		switch kind {
		case startLatest:
			lo, err = adm.ListEndOffsets(ctx, topics...)
		case startTimestamp:
			lo, err = adm.ListOffsetsAfterMilli(ctx, start.at.UnixMilli(), topics...)
		default:
			lo, err = adm.ListStartOffsets(ctx, topics...)
		}
		if err == nil {
			err = lo.Error()
		}
		if err != nil {
			return err
		}
		for _, tp := range need {
			o, ok := lo.Lookup(tp.Topic, tp.Partition)
			if !ok {
				return fmt.Errorf("no offset listed for %s", splitID(tp.Topic, tp.Partition))
			}
			out[tp] = o.Offset
		}
		return nil
	}
	if start.kind != startCommitted {
		return out, listed(start.kind, tps)
	}
	committed, err := adm.FetchOffsetsForTopics(ctx, group, topics...)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the committed offsets of group %q: %w", group, err)
	}
	var rest []topicPartition
	for _, tp := range tps {
		if o, ok := committed.Lookup(tp.Topic, tp.Partition); ok && o.At >= 0 {
			out[tp] = o.At
		} else {
			rest = append(rest, tp)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	return out, listed(start.fallback, rest)
}

// HandleSplitRequest hands the requester every pending split it owns. A Kafka source never
// ends: the answer is never "no more".
func (e *enumerator) HandleSplitRequest(subtask int) ([]stream.Split, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []stream.Split
	for tp, s := range e.pending {
		if owner(tp, e.parallelism) == subtask {
			out = append(out, s.encode())
			delete(e.pending, tp)
		}
	}
	stream.SortSplits(out)
	return out, false
}

// AddReader does nothing: readers pull.
func (e *enumerator) AddReader(int) {}

// AddSplitsBack queues splits again (a reader failed after they were assigned).
func (e *enumerator) AddSplitsBack(splits []stream.Split, _ int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, sp := range splits {
		s, err := decodeSplit(sp)
		if err != nil {
			e.log.Error("dropping a split handed back that does not decode", "split", sp.ID, "err", err)
			continue
		}
		e.known[s.tp()] = true
		e.pending[s.tp()] = s
	}
}

// SnapshotState encodes the known partitions and the pending splits.
func (e *enumerator) SnapshotState(int64) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.encodeState(), nil
}

// NotifyCheckpointComplete does nothing: readers commit offsets.
func (e *enumerator) NotifyCheckpointComplete(int64) {}

const enumStateVersion = 1

func (e *enumerator) encodeState() []byte {
	known := make([]stream.Split, 0, len(e.known))
	for tp := range e.known {
		known = append(known, partitionSplit{Topic: tp.Topic, Partition: tp.Partition}.encode())
	}
	pending := make([]stream.Split, 0, len(e.pending))
	for _, s := range e.pending {
		pending = append(pending, s.encode())
	}
	stream.SortSplits(known)
	stream.SortSplits(pending)
	b := []byte{enumStateVersion}
	b = stream.AppendString(b, string(stream.EncodeSplits(known)))
	return stream.AppendString(b, string(stream.EncodeSplits(pending)))
}

func (e *enumerator) decodeState(b []byte) error {
	if len(b) == 0 || b[0] != enumStateVersion {
		return fmt.Errorf("state version %v, want %d", b[:min(len(b), 1)], enumStateVersion)
	}
	d := stream.NewDecoder(b[1:])
	knownB, pendingB := d.Bytes(), d.Bytes()
	if d.Err() != nil {
		return d.Err()
	}
	if d.Remaining() != 0 {
		return fmt.Errorf("%d trailing bytes", d.Remaining())
	}
	known, err := stream.DecodeSplits(knownB)
	if err != nil {
		return err
	}
	pending, err := stream.DecodeSplits(pendingB)
	if err != nil {
		return err
	}
	for _, sp := range known {
		s, err := decodeSplit(sp)
		if err != nil {
			return err
		}
		e.known[s.tp()] = true
	}
	for _, sp := range pending {
		s, err := decodeSplit(sp)
		if err != nil {
			return err
		}
		e.known[s.tp()] = true
		e.pending[s.tp()] = s
	}
	return nil
}
