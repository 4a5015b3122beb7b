package examples_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/stream"
)

func TestExpectedCountsMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct{ n, k int64 }{{1, 1}, {10, 3}, {7, 10}, {1000, 7}, {99, 100}} {
		sums, counts := map[int64]int64{}, map[int64]int64{}
		for v := int64(1); v <= tc.n; v++ {
			counts[v%tc.k]++
			sums[v%tc.k] += v
		}
		var want []string
		for k, c := range counts {
			want = append(want, fmt.Sprintf("%d,%d,%d", k, c, sums[k]))
		}
		sort.Strings(want)
		if got := examples.ExpectedCounts(tc.n, tc.k); !slices.Equal(got, want) {
			t.Errorf("N=%d K=%d: %v, want %v", tc.n, tc.k, got, want)
		}
	}
}

func TestJobsAreRegisteredAndBuild(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{examples.CheckableCountName, []string{"--records", "10", "--output", dir}},
		{examples.CheckableCountName, []string{"--records", "10", "--output", dir, "--ballast", "1024", "--progress", dir + "/progress"}},
		{examples.CheckableCountName, []string{"--records", "10", "--output", dir, "--timestamps", t.TempDir()}},
		{examples.WordCountName, []string{"--input", dir}},
		{examples.TopSpeedWindowingName, nil},
		{examples.KafkaCountName, []string{"--brokers", "127.0.0.1:9092", "--input", "in", "--output", "out"}},
	} {
		build, ok := stream.Lookup(tc.name)
		if !ok {
			t.Fatalf("%s is not registered (have %v)", tc.name, stream.Names())
		}
		job, err := build(tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := job.Graph(); err != nil {
			t.Fatalf("%s graph: %v", tc.name, err)
		}
	}
}

func TestBadArguments(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown flag":  {"--nope", "1", "--output", "x"},
		"negative":      {"--records", "-5", "--output", "x"},
		"no output":     {"--records", "5"},
		"bad number":    {"--records", "many", "--output", "x"},
		"stray arg":     {"--output", "x", "extra"},
		"zero parallel": {"--output", "x", "--parallelism", "0"},
		"neg. ballast":  {"--output", "x", "--ballast", "-1"},
	} {
		if _, err := examples.BuildCheckableCount(args); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestTopSpeedTriggersEvery50Meters(t *testing.T) {
	job, err := examples.BuildTopSpeedWindowing([]string{"--cars", "1", "--records", "10"})
	if err != nil || job == nil {
		t.Fatal(err)
	}
	// A car at constant 36 km/h drives 1 m per 100 ms event: 51 events pass 50 m once.
	fires := 0
	s := examples.NewTopSpeedState()
	for i := range 120 {
		e := examples.CarEvent{CarID: 0, Speed: 36 + i%3, Distance: float64(i + 1), Time: int64(i) * 100}
		examples.TopSpeedOnRecord(0, s, e, e.Time, func(top examples.CarEvent, _ int64) {
			fires++
			if top.Speed != 38 {
				t.Fatalf("top speed %d, want 38", top.Speed)
			}
		})
	}
	if fires != 2 {
		t.Fatalf("%d firings over 120 m, want 2 (at 51 m and 102 m)", fires)
	}
}

func TestKafkaCountBadArguments(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no brokers":    {[]string{"--input", "in", "--output", "out"}, "--brokers, --input and --output are required"},
		"bad guarantee": {[]string{"--brokers", "b:1", "--input", "in", "--output", "out", "--guarantee", "twice"}, `guarantee "twice"`},
		"bad timeout":   {[]string{"--brokers", "b:1", "--input", "in", "--output", "out", "--transaction-timeout", "10ms"}, "TransactionTimeout 10ms"},
	} {
		t.Run(name, func(t *testing.T) {
			job, err := examples.BuildKafkaCount(tc.args)
			if err == nil {
				_, err = job.Graph()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWordCountAppendToFormatsAsSprintf: the sink's AppendTo writes what "(%s,%d)" would.
func TestWordCountAppendToFormatsAsSprintf(t *testing.T) {
	for _, w := range []examples.WordCount{{"", 0}, {"a", 1}, {"w042", 255}, {"wörd", 1 << 40}, {"x", -7}, {"m", math.MinInt64}, {"M", math.MaxInt64}} {
		want := fmt.Sprintf("(%s,%d)", w.Word, w.Count)
		if got := string(w.AppendTo([]byte("pre"))); got != "pre"+want {
			t.Errorf("AppendTo(%+v) = %q, want %q", w, got, "pre"+want)
		}
		if got := w.String(); got != want {
			t.Errorf("String(%+v) = %q, want %q", w, got, want)
		}
	}
}
