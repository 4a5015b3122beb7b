package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
)

// pollBatch is the most records one Poll emits.
const pollBatch = 1024

// reader reads the partitions assigned to one source subtask, without a consumer group.
type reader[T any] struct {
	name string
	cfg  *Source[T]
	rc   stream.ReaderContext
	log  *slog.Logger

	client *kgo.Client
	// next is every owned partition's next offset to emit (the split state).
	next map[topicPartition]int64
	// added are partitions assigned before Start created the client.
	added map[topicPartition]int64
	wms   *partitionWatermarks

	lagMu sync.Mutex
	lag   map[topicPartition]int64

	// toCommit holds each snapshot's offsets until its checkpoint completes (GroupID set).
	toCommit map[int64]map[topicPartition]int64
	commits  sync.WaitGroup
}

func newReader[T any](name string, cfg *Source[T], rc stream.ReaderContext) *reader[T] {
	return &reader[T]{
		name: name, cfg: cfg, rc: rc,
		log:  slog.Default().With("source", name, "subtask", rc.Subtask),
		next: map[topicPartition]int64{}, added: map[topicPartition]int64{},
		wms: newPartitionWatermarks(cfg.Watermarks), lag: map[topicPartition]int64{},
		toCommit: map[int64]map[topicPartition]int64{},
	}
}

func (r *reader[T]) Start(context.Context) error {
	// A partition added while a fetch is parked at the broker joins the next fetch, so
	// fetchMaxWait bounds how late it is read.
	opts := []kgo.Opt{kgo.SeedBrokers(r.cfg.Brokers...), kgo.ConsumePartitions(r.assignment(r.added)), kgo.FetchMaxWait(fetchMaxWait)}
	if !r.cfg.ReadUncommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(append(opts, r.cfg.ClientOptions...)...)
	if err != nil {
		return fmt.Errorf("kafka source %q: %w", r.name, err)
	}
	r.client = cl
	r.added = nil
	// Keep a split request outstanding: the enumerator answers it when it finds partitions.
	r.rc.RequestSplit()
	return nil
}

func (r *reader[T]) assignment(parts map[topicPartition]int64) map[string]map[int32]kgo.Offset {
	m := map[string]map[int32]kgo.Offset{}
	for tp, off := range parts {
		if m[tp.Topic] == nil {
			m[tp.Topic] = map[int32]kgo.Offset{}
		}
		m[tp.Topic][tp.Partition] = kgo.NewOffset().At(off)
	}
	return m
}

// AddSplits takes over partitions and asks for more (new partitions come later).
func (r *reader[T]) AddSplits(splits []stream.Split) {
	now := time.Now()
	fresh := map[topicPartition]int64{}
	for _, sp := range splits {
		s, err := decodeSplit(sp)
		if err != nil {
			panic(err) // splits come from our own enumerator or checkpoint; a bad one is a bug
		}
		if _, dup := r.next[s.tp()]; dup {
			continue
		}
		r.next[s.tp()] = s.Offset
		fresh[s.tp()] = s.Offset
		if r.wms != nil {
			r.wms.add(s.tp(), now)
		}
	}
	if len(fresh) > 0 {
		r.log.Info("Kafka partitions assigned", "partitions", len(fresh), "owned", len(r.next))
	}
	if r.client == nil {
		for tp, off := range fresh {
			r.added[tp] = off
		}
		return
	}
	if len(fresh) > 0 {
		r.client.AddConsumePartitions(r.assignment(fresh))
	}
	r.rc.RequestSplit()
}

// NotifyNoMoreSplits does not happen: the enumerator never ends.
func (r *reader[T]) NotifyNoMoreSplits() {}

// Poll emits what the client has fetched, without waiting.
func (r *reader[T]) Poll(_ context.Context, out stream.Collector) (stream.InputStatus, error) {
	if r.client == nil {
		return stream.NothingAvailable, nil
	}
	//lint:ignore SA1012 a nil context makes PollRecords return what is buffered without waiting
	fs := r.client.PollRecords(nil, pollBatch)
	var ferr error
	fs.EachError(func(topic string, p int32, err error) {
		if ferr != nil || errors.Is(err, context.Canceled) || kerr.IsRetriable(err) {
			return
		}
		ferr = fmt.Errorf("kafka source %q: fetching %s: %w", r.name, splitID(topic, p), err)
	})
	if ferr != nil {
		return stream.NothingAvailable, ferr
	}
	n := 0
	now := time.Now()
	var err error
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if err != nil {
			return
		}
		tp := topicPartition{p.Topic, p.Partition}
		next, owned := r.next[tp]
		if !owned {
			return
		}
		for _, rec := range p.Records {
			if rec.Offset < next {
				continue
			}
			v, derr := r.cfg.Deserialize(recordOf(rec))
			if derr != nil {
				err = fmt.Errorf("kafka source %q: deserializing %s offset %d: %w", r.name, splitID(rec.Topic, rec.Partition), rec.Offset, derr)
				return
			}
			ts := rec.Timestamp.UnixMilli()
			if cerr := out.Collect(v, ts); cerr != nil {
				err = cerr
				return
			}
			next = rec.Offset + 1
			r.next[tp] = next
			if r.wms != nil {
				r.wms.record(tp, ts, now)
			}
			n++
		}
		if p.HighWatermark >= 0 {
			r.lagMu.Lock()
			r.lag[tp] = max(p.HighWatermark-next, 0)
			r.lagMu.Unlock()
		}
	})
	if err != nil {
		return stream.NothingAvailable, err
	}
	if n == 0 {
		return stream.NothingAvailable, nil
	}
	return stream.MoreAvailable, nil
}

// ReaderWatermark is the smallest watermark over the live partitions (stream.WatermarkReader).
func (r *reader[T]) ReaderWatermark() int64 {
	if r.wms == nil {
		return stream.MinWatermark
	}
	return r.wms.current(time.Now())
}

// SplitLag is each owned partition's consumer lag (high watermark minus next offset) as of
// its last fetch (stream.SplitLagReporter: the TaskManager reports it as a task metric).
func (r *reader[T]) SplitLag() []stream.SplitLag {
	r.lagMu.Lock()
	defer r.lagMu.Unlock()
	out := make([]stream.SplitLag, 0, len(r.lag))
	for tp, l := range r.lag {
		out = append(out, stream.SplitLag{Split: splitID(tp.Topic, tp.Partition), Records: l})
	}
	slices.SortFunc(out, func(a, b stream.SplitLag) int { return stream.CompareIDs(a.Split, b.Split) })
	return out
}

// SnapshotState returns every owned partition with its next offset.
func (r *reader[T]) SnapshotState(checkpointID int64) ([]stream.Split, error) {
	out := make([]stream.Split, 0, len(r.next))
	offsets := make(map[topicPartition]int64, len(r.next))
	for tp, off := range r.next {
		out = append(out, partitionSplit{Topic: tp.Topic, Partition: tp.Partition, Offset: off}.encode())
		offsets[tp] = off
	}
	stream.SortSplits(out)
	if r.cfg.GroupID != "" {
		r.toCommit[checkpointID] = offsets
	}
	return out, nil
}

// NotifyCheckpointComplete commits the checkpoint's offsets to the consumer group, in the
// background: they are for monitoring (lag per group), recovery never reads them.
func (r *reader[T]) NotifyCheckpointComplete(_ context.Context, checkpointID int64) error {
	offsets, ok := r.toCommit[checkpointID]
	for id := range r.toCommit {
		if id <= checkpointID {
			delete(r.toCommit, id)
		}
	}
	if !ok || len(offsets) == 0 || r.client == nil {
		return nil
	}
	var commit kadm.Offsets
	for tp, off := range offsets {
		commit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: off, LeaderEpoch: -1})
	}
	cl := r.client
	r.commits.Add(1)
	go func() {
		defer r.commits.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := kadm.NewClient(cl).CommitOffsets(ctx, r.cfg.GroupID, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			r.log.Warn("committing offsets to the consumer group failed (monitoring only)", "group", r.cfg.GroupID, "checkpoint", checkpointID, "err", err)
		}
	}()
	return nil
}

func (r *reader[T]) Close() error {
	r.commits.Wait()
	if r.client != nil {
		r.client.Close()
	}
	return nil
}
