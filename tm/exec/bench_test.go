package exec_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/tm/exec"
)

// BenchmarkWordCountKeyBy runs WordCount (directory source → tokenize → keyBy → count →
// file sink) at parallelism 2 across two executors on loopback; b.N is the number of words.
// Reports words/s, with the subtasks' per-record metrics on (as tide runs) and off (the
// baseline that shows what the metrics cost).
func BenchmarkWordCountKeyBy(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("metrics=%v", on), func(b *testing.B) {
			benchmarkWordCount(b, func(c *exec.Config) { c.DisableTaskMetrics = !on })
		})
	}
}

func benchmarkWordCount(b *testing.B, opt func(*exec.Config)) {
	in, out := b.TempDir(), b.TempDir()
	const filesN = 8
	wordsPerLine := 10
	lines := max(1, b.N/(filesN*wordsPerLine))
	for f := range filesN {
		var sb strings.Builder
		for l := range lines {
			for w := range wordsPerLine {
				fmt.Fprintf(&sb, "w%d ", (f*7+l*13+w)%1000)
			}
			sb.WriteByte('\n')
		}
		writeFile(b, in, fmt.Sprintf("part-%d.txt", f), sb.String())
	}
	job, err := examples.BuildWordCount([]string{"--input", in, "--output", out, "--parallelism", "2"})
	if err != nil {
		b.Fatal(err)
	}
	am := newFakeAM(b, job, 2, opt)
	b.ResetTimer()
	cpu0 := testkit.CPUTime(b, syscall.RUSAGE_SELF)
	am.deploy(2)
	am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })
	b.StopTimer()
	cpu := testkit.CPUTime(b, syscall.RUSAGE_SELF) - cpu0
	words := float64(filesN * lines * wordsPerLine)
	b.ReportMetric(words/b.Elapsed().Seconds(), "words/s")
	// CPU time per word (user + system, every goroutine of the process): unlike words/s it
	// hardly moves with the machine's load, so it compares builds on a shared machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/words, "cpu-ns/word")
}
