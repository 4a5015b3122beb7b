package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// benchRecords is how many records the Kafka benchmark moves (override with
// TIDE_KAFKA_BENCH_RECORDS).
func benchRecords() int {
	if n, err := strconv.Atoi(os.Getenv("TIDE_KAFKA_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 200_000
}

// kafkaTool runs one of Kafka's own command-line tools on the harness's classpath.
func kafkaTool(b *testing.B, e *kafkatest.Env, class string, args ...string) string {
	b.Helper()
	cp, err := os.ReadFile(e.ClasspathFile)
	if err != nil {
		b.Fatalf("the broker's classpath: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", strings.TrimSpace(string(cp)), class}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", class, args, err, out)
	}
	return string(out)
}

var (
	producerRate = regexp.MustCompile(`(?m)^(\d+) records sent, ([0-9.]+) records/sec .*50th`)
	// ConsumerPerformance prints start, end, MB, MB/s, records, records/s, rebalance ms,
	// fetch ms, fetch MB/s, fetch records/s.
	consumerLine = regexp.MustCompile(`(?m)^[0-9-]+ [0-9:]+, [0-9-]+ [0-9:]+, [0-9.]+, [0-9.]+, (\d+), [0-9.]+, \d+, \d+, [0-9.]+, ([0-9.]+)$`)
)

// BenchmarkKafkaCount: records/s of KafkaCount (Kafka -> keyBy -> Kafka, 2 TaskManagers,
// parallelism 2, checkpoints every second) with exactly-once and at-least-once, next to
// the broker's own producer and consumer (Kafka's perf tools) on the same 2-partition topic.
// The job's time runs from RUNNING to the last output record readable under
// read_committed, so it includes the wait for the last checkpoint's commit.
func BenchmarkKafkaCount(b *testing.B) {
	e := kafkatest.Require(b)
	n := benchRecords()
	in := e.CreateTopic(b, 2)
	keys := filepath.Join(b.TempDir(), "keys.txt")
	var sb strings.Builder
	for k := range 1000 {
		fmt.Fprintf(&sb, "k%d\n", k)
	}
	if err := os.WriteFile(keys, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	out := kafkaTool(b, e, "org.apache.kafka.tools.ProducerPerformance", "--topic", in, "--num-records", strconv.Itoa(n),
		"--payload-file", keys, "--throughput", "-1", "--producer-props", "bootstrap.servers="+e.Bootstrap, "acks=all")
	m := producerRate.FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no rate in ProducerPerformance's output:\n%s", out)
	}
	prodRate, _ := strconv.ParseFloat(m[2], 64)
	out = kafkaTool(b, e, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", e.Bootstrap, "--topic", in,
		"--num-records", strconv.Itoa(n), "--timeout", "120000", "--group", kafkatest.UniqueName(b))
	m = consumerLine.FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no figures in ConsumerPerformance's output:\n%s", out)
	}
	consRate, _ := strconv.ParseFloat(m[2], 64)

	rates := map[string]float64{}
	for range b.N {
		for _, g := range []string{"exactly-once", "at-least-once"} {
			rates[g] += runKafkaCount(b, e, in, n, g) / float64(b.N)
		}
	}
	b.ReportMetric(rates["exactly-once"], "eo-records/s")
	b.ReportMetric(rates["at-least-once"], "alo-records/s")
	fmt.Printf("Kafka, %d records on one 2-partition topic: broker's producer %.0f records/s, consumer %.0f records/s (fetch); "+
		"tide KafkaCount p=2: exactly-once %.0f records/s, at-least-once %.0f records/s\n",
		n, prodRate, consRate, rates["exactly-once"], rates["at-least-once"])
}

// runKafkaCount runs KafkaCount over the n records of in and returns records/s.
func runKafkaCount(b *testing.B, e *kafkatest.Env, in string, n int, guarantee string) float64 {
	out := e.CreateTopic(b, 2)
	c := startLocal(b, standalone.LocalOptions{JobName: examples.KafkaCountName, TaskManagers: 2,
		JobArgs: []string{"--brokers", e.Bootstrap, "--input", in, "--output", out, "--guarantee", guarantee,
			"--group", kafkatest.UniqueName(b)},
		Dynamic: testkit.Reactive(b.TempDir(), "1 s")})
	id := testkit.WaitJobID(b, restOf(c))
	testkit.WaitRunningAt(b, restOf(c), id, 2)
	start := time.Now()
	opts := []kgo.Opt{kgo.ConsumeTopics(out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if guarantee == "exactly-once" {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := e.Client(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for seen := 0; seen < n; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			b.Fatalf("%s: %d of %d output records after %s", guarantee, seen, n, time.Since(start))
		}
		seen += fs.NumRecords()
	}
	took := time.Since(start)
	return float64(n) / took.Seconds()
}
