package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// feeder writes the input of KafkaCount: record i carries the key "k<i mod keys>", round
// robin over the topic's partitions, at a steady rate, in phases (a phase may use a
// partition added since the last).
type feeder struct {
	e     *kafkatest.Env
	topic string
	keys  int
	mu    sync.Mutex
	sent  map[string]int
	total int
}

func (f *feeder) phase(ctx context.Context, partitions, n int, perSecond int) error {
	cl, err := f.e.Client(kgo.DefaultProduceTopic(f.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	batch := max(perSecond/20, 1)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for done := 0; done < n; {
		var recs []*kgo.Record
		f.mu.Lock()
		for i := 0; i < batch && done < n; i++ {
			key := "k" + strconv.Itoa(f.total%f.keys)
			recs = append(recs, &kgo.Record{Partition: int32(f.total % partitions), Value: []byte(key)})
			f.sent[key]++
			f.total++
			done++
		}
		f.mu.Unlock()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// checkExactWhenFed waits for the feeding goroutine's result on feedErr (failing t on an
// error), then checks that topic holds exactly once what f sent (checkExact); it returns
// the output records and how many records f sent.
func (f *feeder) checkExactWhenFed(t *testing.T, feedErr <-chan error, topic string) ([]*kgo.Record, int) {
	t.Helper()
	if err := <-feedErr; err != nil {
		t.Fatalf("feeding the input: %v", err)
	}
	f.mu.Lock()
	sent, total := maps(f.sent), f.total
	f.mu.Unlock()
	return checkExact(t, f.e, topic, sent, total), total
}

// checkExact reads the output under read_committed once the expected number of records
// is there and checks it is exactly "key,1".."key,n" for every key, in order per key.
func checkExact(t *testing.T, e *kafkatest.Env, topic string, sent map[string]int, total int) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	recs, err := e.WaitCommitted(ctx, topic, total)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	var problems []string
	for _, r := range recs {
		if !r.Attrs.IsTransactional() {
			t.Fatalf("output record %s at %d/%d was not written in a transaction", r.Value, r.Partition, r.Offset)
		}
		key, count, ok := strings.Cut(string(r.Value), ",")
		n, err := strconv.Atoi(count)
		if !ok || err != nil || string(r.Key) != key {
			t.Fatalf("output record %q (key %q) is not key,count", r.Value, r.Key)
		}
		next[key]++
		if n != next[key] && len(problems) < 10 {
			problems = append(problems, fmt.Sprintf("%s: got count %d, want %d (partition %d offset %d)", key, n, next[key], r.Partition, r.Offset))
		}
	}
	for key, n := range sent {
		if next[key] != n && len(problems) < 20 {
			problems = append(problems, fmt.Sprintf("%s: %d output records, want %d", key, next[key], n))
		}
	}
	if len(recs) != total {
		problems = append(problems, fmt.Sprintf("%d output records, want %d", len(recs), total))
	}
	if len(problems) > 0 {
		t.Fatalf("output is not exactly once:\n%s", strings.Join(problems, "\n"))
	}
	return recs
}

// TestKafkaCountExactlyOnce runs Kafka -> keyed count -> Kafka (exactly-once) while the
// input keeps coming, across a scale-up to 3, a partition added to the input topic, a
// TaskManager frozen during a checkpoint and then SIGKILLed (down to 2) and a scale-up to 3
// again, and checks the
// read_committed output: every key's counts 1..n once each, in order.
func TestKafkaCountExactlyOnce(t *testing.T) {
	e := kafkatest.Require(t)
	in, out := e.CreateTopic(t, 2), e.CreateTopic(t, 3)
	group := kafkatest.UniqueName(t)
	args := []string{"--brokers", e.Bootstrap, "--input", in, "--output", out, "--group", group,
		"--transactional-id-prefix", out, "--discovery-interval", "300ms", "--transaction-timeout", "2m"}
	c := startLocal(t, standalone.LocalOptions{JobName: examples.KafkaCountName, JobArgs: args, TaskManagers: 2,
		Dynamic: testkit.Reactive(t.TempDir(), "300 ms")})
	id := testkit.WaitJobID(t, restOf(c))
	d := testkit.WaitRunningAt(t, restOf(c), id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)

	f := &feeder{e: e, topic: in, keys: 7, sent: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feedErr := make(chan error, 1)
	partitionAdded := make(chan struct{})
	go func() {
		if err := f.phase(ctx, 2, 6000, 1500); err != nil {
			feedErr <- err
			return
		}
		<-partitionAdded
		feedErr <- f.phase(ctx, 3, 9000, 1500)
	}()

	// Rescale 1: up to 3.
	if _, err := c.AddTaskManager(t.Context()); err != nil {
		t.Fatal(err)
	}
	d = testkit.WaitRunningAt(t, restOf(c), id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)

	// A partition added while running.
	resp, err := e.Admin(t).CreatePartitions(t.Context(), 1, in)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	close(partitionAdded)

	// Rescale 2: freeze tm-2 until a checkpoint waits for it, then kill it.
	before := latestCompleted(t, c, id)
	if err := c.Signal("tm-2", syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var pending int64
	testkit.WaitFor(t, "a checkpoint in progress with tm-2 frozen", func() (bool, error) {
		var s testkit.CheckpointStats
		if err := restOf(c)("/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		for _, h := range s.History {
			if h.Status == "IN_PROGRESS" && h.Attempt == d.Attempt && h.ID > before {
				pending = h.ID
				return true, nil
			}
		}
		return false, fmt.Errorf("no checkpoint in progress")
	})
	if err := c.Signal("tm-2", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed tm-2 during checkpoint %d of attempt %d", pending, d.Attempt)
	d = testkit.WaitRunningAt(t, restOf(c), id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)

	// Rescale 3: up to 3 again, restoring the state and transactions of the killed run.
	if _, err := c.AddTaskManager(t.Context()); err != nil {
		t.Fatal(err)
	}
	d = testkit.WaitRunningAt(t, restOf(c), id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)

	recs, total := f.checkExactWhenFed(t, feedErr, out)
	t.Logf("%d input records over 3 partitions, %d output records exactly once (attempt %d)", total, len(recs), d.Attempt)

	// Nothing more arrives after another checkpoint, and no transaction is left open.
	after := latestCompleted(t, c, id)
	testkit.WaitFor(t, "two more checkpoints", func() (bool, error) { return latestCompleted(t, c, id) >= after+2, nil })
	again, err := e.ReadCommitted(t.Context(), out)
	if err != nil || len(again) != total {
		t.Fatalf("read_committed after two more checkpoints: %d records (err %v), want %d", len(again), err, total)
	}
	all, err := e.ReadUncommitted(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read_uncommitted sees %d records (aborted attempts included), read_committed %d", len(all), total)

	// The source's lag per partition, a task metric in the REST API, drops to 0 on all three.
	testkit.WaitFor(t, "split lag 0 on the 3 input partitions in GET /jobs/:id/vertices/kafka_in", func() (bool, error) {
		var v struct {
			Subtasks []api.VertexSubtask `json:"subtasks"`
		}
		if err := restOf(c)("/jobs/"+id+"/vertices/kafka_in", &v); err != nil {
			return false, err
		}
		lag := map[string]int64{}
		for _, s := range v.Subtasks {
			for split, l := range s.Metrics.SplitLag {
				lag[split] = l
			}
		}
		for p := range 3 {
			if l, ok := lag[fmt.Sprintf("%s-%d", in, p)]; !ok || l != 0 {
				return false, fmt.Errorf("split lag %v", lag)
			}
		}
		return true, nil
	})

	// The group's offsets (monitoring) reach the end of the input.
	adm := e.Admin(t)
	ends, err := adm.ListEndOffsets(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the group's committed offsets at the end of the input", func() (bool, error) {
		got, err := adm.FetchOffsets(t.Context(), group)
		if err != nil {
			return false, err
		}
		ok := true
		ends.Each(func(o kadm.ListedOffset) {
			if c, found := got.Lookup(in, o.Partition); !found || c.At != o.Offset {
				ok = false
			}
		})
		return ok, nil
	})
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
