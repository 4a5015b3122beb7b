package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrStalled says a read made no progress for a while before reaching the end it aimed for
// (see ReadCommitted); reading again later, once the open transactions ended, succeeds.
var ErrStalled = errors.New("no progress")

// stallTimeout is how long a read waits for records before it reports ErrStalled.
const stallTimeout = 5 * time.Second

// ReadCommitted returns every record of topic that a read_committed consumer can read now:
// each partition from its start up to its last stable offset (the offset of its first open
// transaction, or its end). Records are in partition order, then offset order.
func (e *Env) ReadCommitted(ctx context.Context, topic string) ([]*kgo.Record, error) {
	return e.read(ctx, topic, true)
}

// ReadUncommitted returns every record of topic up to its high watermark, aborted and open
// transactions included.
func (e *Env) ReadUncommitted(ctx context.Context, topic string) ([]*kgo.Record, error) {
	return e.read(ctx, topic, false)
}

func (e *Env) read(ctx context.Context, topic string, committed bool) ([]*kgo.Record, error) {
	acl, err := e.Client()
	if err != nil {
		return nil, err
	}
	defer acl.Close()
	adm := kadm.NewClient(acl)
	var ends kadm.ListedOffsets
	if committed {
		ends, err = adm.ListCommittedOffsets(ctx, topic)
	} else {
		ends, err = adm.ListEndOffsets(ctx, topic)
	}
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing start offsets of %s: %w", topic, err)
	}
	want := map[int32]int64{}
	assign := map[string]map[int32]kgo.Offset{topic: {}}
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(topic, o.Partition); ok && o.Offset > s.Offset {
			want[o.Partition] = o.Offset
			assign[topic][o.Partition] = kgo.NewOffset().At(s.Offset)
		}
	})
	if len(want) == 0 {
		return nil, nil
	}
	// Control records (commit and abort markers) occupy offsets; keeping them lets a
	// partition whose last offsets are markers reach its end.
	opts := []kgo.Opt{kgo.ConsumePartitions(assign), kgo.KeepControlRecords()}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := e.Client(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	byPart := map[int32][]*kgo.Record{}
	for len(want) > 0 {
		// A read_committed fetch skips aborted records without returning them: when the
		// last records before the end are aborted ones whose marker comes after an open
		// transaction, the end is never seen. Such a read stalls, and says so.
		pctx, cancel := context.WithTimeout(ctx, stallTimeout)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %d partitions not read to their end: %w", topic, len(want), err)
		}
		if pctx.Err() != nil && fs.NumRecords() == 0 {
			return nil, fmt.Errorf("reading %s: %d partitions not read to their end: %w", topic, len(want), ErrStalled)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return
			}
			ferr = fmt.Errorf("reading %s partition %d: %w", t, p, err)
		})
		if ferr != nil {
			return nil, ferr
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			end, ok := want[p.Partition]
			if !ok {
				return
			}
			for _, r := range p.Records {
				if r.Offset < end && !r.Attrs.IsControl() {
					byPart[p.Partition] = append(byPart[p.Partition], r)
				}
				if r.Offset+1 >= end {
					delete(want, p.Partition)
				}
			}
		})
	}
	var out []*kgo.Record
	for p := int32(0); len(byPart) > 0; p++ {
		out = append(out, byPart[p]...)
		delete(byPart, p)
	}
	return out, nil
}

// WaitCommitted polls ReadCommitted until it returns at least n records (a commit returns
// before the broker has written its markers, so committed records become readable a moment
// later) and returns what it read last. It fails when ctx ends first.
func (e *Env) WaitCommitted(ctx context.Context, topic string, n int) ([]*kgo.Record, error) {
	for {
		recs, err := e.ReadCommitted(ctx, topic)
		if err == nil && len(recs) >= n {
			return recs, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return recs, fmt.Errorf("waiting for %d committed records in %s, have %d: %w", n, topic, len(recs), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
