package kafka

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// sourceRig runs a source's enumerator and p readers the way the AM and TaskManagers do:
// a reader's split request is answered by the enumerator on the rig's goroutine.
type sourceRig struct {
	t       *testing.T
	enum    stream.SplitEnumerator
	readers []stream.SourceReader
	asked   []atomic.Bool
	outs    []*collector
	cancel  context.CancelFunc
}

func startRig(t *testing.T, src stream.SplitSource, p int, enumState []byte, readerState [][]stream.Split) *sourceRig {
	t.Helper()
	enum, err := src.CreateEnumerator(enumState, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := enum.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &sourceRig{t: t, enum: enum, asked: make([]atomic.Bool, p), cancel: cancel}
	for i := range p {
		i := i
		rd, err := src.CreateReader(stream.ReaderContext{Subtask: i, Parallelism: p, RequestSplit: func() { r.asked[i].Store(true) }})
		if err != nil {
			t.Fatal(err)
		}
		if readerState != nil && len(readerState[i]) > 0 {
			rd.AddSplits(readerState[i])
		}
		if err := rd.Start(ctx); err != nil {
			t.Fatal(err)
		}
		r.readers = append(r.readers, rd)
		r.outs = append(r.outs, &collector{})
	}
	t.Cleanup(r.close)
	return r
}

func (r *sourceRig) close() {
	r.cancel()
	for _, rd := range r.readers {
		rd.Close()
	}
}

// step answers split requests and polls every reader once.
func (r *sourceRig) step() {
	for i, rd := range r.readers {
		if r.asked[i].Swap(false) {
			splits, _ := r.enum.HandleSplitRequest(i)
			if len(splits) > 0 {
				rd.AddSplits(splits)
			} else {
				r.asked[i].Store(true)
			}
		}
		if _, err := rd.Poll(bg, r.outs[i]); err != nil {
			r.t.Fatalf("reader %d: %v", i, err)
		}
	}
}

func (r *sourceRig) all() []string {
	var out []string
	for _, c := range r.outs {
		out = append(out, c.sorted()...)
	}
	slices.Sort(out)
	return out
}

func (r *sourceRig) waitAll(want []string) {
	r.t.Helper()
	want = sortedCopy(want)
	waitFor(r.t, fmt.Sprintf("%d records", len(want)), func() bool {
		r.step()
		return len(r.all()) >= len(want)
	})
	if got := r.all(); !slices.Equal(got, want) {
		r.t.Fatalf("read %d records %v..., want %d", len(got), got[:min(5, len(got))], len(want))
	}
}

// snapshot returns the enumerator's and the readers' state, as a checkpoint holds them.
func (r *sourceRig) snapshot(id int64) ([]byte, []stream.Split) {
	es, err := r.enum.SnapshotState(id)
	if err != nil {
		r.t.Fatal(err)
	}
	var splits []stream.Split
	for _, rd := range r.readers {
		s, err := rd.SnapshotState(id)
		if err != nil {
			r.t.Fatal(err)
		}
		splits = append(splits, s...)
	}
	return es, splits
}

// produce writes values to the partitions round robin, with timestamps base+i ms.
func produce(t *testing.T, e *kafkatest.Env, topic string, partitions int, vals []string, base time.Time) {
	t.Helper()
	cl, err := e.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i, v := range vals {
		recs = append(recs, &kgo.Record{Partition: int32(i % partitions), Value: []byte(v), Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
	}
	if err := cl.ProduceSync(bg, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func testSource(e *kafkatest.Env, topics ...string) Source[string] {
	return Source[string]{Brokers: []string{e.Bootstrap}, Topics: topics, Deserialize: valueString,
		DiscoveryInterval: 100 * time.Millisecond, StartupTimeout: 20 * time.Second}
}

func splitSourceOf(s Source[string]) *splitSource[string] {
	if err := s.validate(); err != nil {
		panic(err)
	}
	s.fillDefaults()
	return &splitSource[string]{name: "kafka-in", cfg: s}
}

// TestSourceReadsDiscoversAndRestores: 3 partitions read by 2 readers; a partition added
// while running is found and read from its start; a restore at parallelism 3 from a
// snapshot continues exactly where the snapshot was, and timestamps are the records'.
func TestSourceReadsDiscoversAndRestores(t *testing.T) {
	e := kafkatest.Require(t)
	topic := e.CreateTopic(t, 3)
	base := time.UnixMilli(1_700_000_000_000)
	first := values("a", 0, 300)
	produce(t, e, topic, 3, first, base)

	src := splitSourceOf(testSource(e, topic))
	rig := startRig(t, src, 2, nil, nil)
	rig.waitAll(first)
	// Lag per split: every partition read to its end.
	waitFor(t, "lag 0 on all 3 partitions", func() bool {
		rig.step()
		var lags []stream.SplitLag
		for _, rd := range rig.readers {
			lags = append(lags, rd.(stream.SplitLagReporter).SplitLag()...)
		}
		if len(lags) != 3 {
			return false
		}
		for _, l := range lags {
			if l.Records != 0 {
				return false
			}
		}
		return true
	})
	for i, c := range rig.outs {
		for j, ts := range c.ts {
			if ts < base.UnixMilli() || ts >= base.UnixMilli()+300 {
				t.Fatalf("reader %d record %d has timestamp %d, want the producer's", i, j, ts)
			}
		}
	}

	// A partition added while running.
	added := time.Now()
	resp, err := e.Admin(t).CreatePartitions(bg, 1, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	second := values("b", 0, 8)
	produce(t, e, topic, 4, second, base)
	rig.waitAll(append(slices.Clone(first), second...))
	t.Logf("a partition added while running was read %s after it was created", time.Since(added).Round(time.Millisecond))

	enumState, splits := rig.snapshot(1)
	if len(splits) != 4 {
		t.Fatalf("snapshot holds %d splits, want 4", len(splits))
	}
	rig.close()

	third := values("c", 0, 40)
	produce(t, e, topic, 4, third, base)
	// Restore at parallelism 3 (the TaskManager hands splits out round robin by id).
	stream.SortSplits(splits)
	per := make([][]stream.Split, 3)
	for i, s := range splits {
		per[i%3] = append(per[i%3], s)
	}
	rig2 := startRig(t, src, 3, enumState, per)
	rig2.waitAll(third)
}

// TestSourceStartingOffsets: earliest, latest, a group's committed offsets (with the
// fallback), and a timestamp.
func TestSourceStartingOffsets(t *testing.T) {
	e := kafkatest.Require(t)
	topic := e.CreateTopic(t, 1)
	base := time.UnixMilli(1_700_000_000_000)
	before := values("x", 0, 50)
	produce(t, e, topic, 1, before, base)
	group := kafkatest.UniqueName(t)

	// Commit offset 20 for the group the way the reader does on a completed checkpoint.
	s := testSource(e, topic)
	s.GroupID = group
	rig := startRig(t, splitSourceOf(s), 1, nil, nil)
	rig.waitAll(before)
	rd := rig.readers[0].(*reader[string])
	rd.next[topicPartition{topic, 0}] = 20
	if _, err := rd.SnapshotState(7); err != nil {
		t.Fatal(err)
	}
	if err := rd.NotifyCheckpointComplete(bg, 7); err != nil {
		t.Fatal(err)
	}
	rd.commits.Wait()
	rig.close()

	tests := []struct {
		name  string
		start StartingOffsets
		group string
		want  []string
	}{
		{"earliest", Earliest(), "", before},
		{"latest", Latest(), "", nil},
		{"committed", Committed(Earliest()), group, before[20:]},
		{"committed fallback", Committed(Latest()), group + "-none", nil},
		{"timestamp", Timestamp(base.Add(45 * time.Millisecond)), "", before[45:]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSource(e, topic)
			s.StartingOffsets, s.GroupID = tc.start, tc.group
			rig := startRig(t, splitSourceOf(s), 1, nil, nil)
			after := values("y-"+tc.name, 0, 5)
			// Wait until the split is assigned, so "latest" is resolved before these.
			waitFor(t, "the split", func() bool { rig.step(); return len(rig.readers[0].(*reader[string]).next) == 1 })
			produce(t, e, topic, 1, after, base.Add(time.Hour))
			want := append(slices.Clone(tc.want), after...)
			var got []string
			waitFor(t, fmt.Sprintf("%d records", len(want)), func() bool {
				rig.step()
				got = got[:0]
				for _, v := range rig.all() {
					if v[0] == 'x' || strings.HasPrefix(v, "y-"+tc.name) {
						got = append(got, v)
					}
				}
				return len(got) >= len(want)
			})
			if !slices.Equal(got, sortedCopy(want)) {
				t.Fatalf("read %v, want %v", got, want)
			}
		})
	}
}

// TestSourceRegexDiscoversNewTopics: a pattern picks up a matching topic created later and
// leaves others alone.
func TestSourceRegexDiscoversNewTopics(t *testing.T) {
	e := kafkatest.Require(t)
	t1 := e.CreateTopic(t, 1)
	produce(t, e, t1, 1, values("p", 0, 3), time.Now())
	s := testSource(e)
	s.Topics, s.TopicPattern = nil, regexp.MustCompile("^"+regexp.QuoteMeta(t1)+"(-more)?$")
	rig := startRig(t, splitSourceOf(s), 1, nil, nil)
	rig.waitAll(values("p", 0, 3))
	resp, err := e.Admin(t).CreateTopic(bg, 2, 1, nil, t1+"-more")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	produce(t, e, t1+"-more", 2, values("q", 0, 6), time.Now())
	rig.waitAll(append(values("p", 0, 3), values("q", 0, 6)...))
}

// TestSourceBadInput: a missing topic and unreachable brokers fail the enumerator's start
// with errors that say so.
func TestSourceBadInput(t *testing.T) {
	e := kafkatest.Require(t)
	missing := kafkatest.UniqueName(t)
	s := testSource(e, missing)
	enum, err := splitSourceOf(s).CreateEnumerator(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, enum.Start(bg), `kafka source "kafka-in"`, fmt.Sprintf("topic %q does not exist", missing))

	s = testSource(e, "t")
	s.Brokers, s.StartupTimeout = []string{"127.0.0.1:1"}, 2*time.Second
	enum, err = splitSourceOf(s).CreateEnumerator(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, enum.Start(bg), `kafka source "kafka-in": discovering topics ["t"] on brokers 127.0.0.1:1`, "connection refused")
}

// TestSourcePartitionWatermarks: one reader, two partitions with Kafka timestamps; the
// watermark follows the slower partition until that one goes idle, then the other alone.
func TestSourcePartitionWatermarks(t *testing.T) {
	e := kafkatest.Require(t)
	topic := e.CreateTopic(t, 2)
	s := testSource(e, topic)
	s.Watermarks = &PartitionWatermarks{MaxOutOfOrderness: 5 * time.Millisecond, IdleTimeout: 5 * time.Second}
	base := time.UnixMilli(1_700_000_000_000)
	cl, err := e.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	send := func(p int32, v string, ts time.Time) {
		t.Helper()
		if err := cl.ProduceSync(bg, &kgo.Record{Partition: p, Value: []byte(v), Timestamp: ts}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	send(0, "slow", base.Add(100*time.Millisecond))
	send(1, "fast", base.Add(900*time.Millisecond))
	rig := startRig(t, splitSourceOf(s), 1, nil, nil)
	rd := rig.readers[0].(*reader[string])
	rig.waitAll([]string{"fast", "slow"})
	if wm, want := rd.ReaderWatermark(), base.Add(100*time.Millisecond).UnixMilli()-6; wm != want {
		t.Fatalf("watermark %d with both partitions active, want the slow one's %d", wm, want)
	}
	// Partition 1 keeps going; partition 0 goes quiet and, after the idle timeout, stops
	// holding the watermark back.
	want := base.Add(2 * time.Second).UnixMilli()
	waitFor(t, "partition 0 idle", func() bool {
		send(1, "more", base.Add(2*time.Second))
		rig.step()
		return rd.ReaderWatermark() == want-6
	})
}
