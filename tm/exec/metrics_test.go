package exec_test

import (
	"io"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
)

// TestTaskMetricsCountEveryRecord: the per-record counters are batched on the subtask's
// goroutine, yet a sample is current whenever the subtask waits: a slow source's first
// sample shows far fewer records than a batch (256), and once the input ended (the subtasks waiting
// for the final checkpoint) every record and byte sent is counted on both sides exactly.
func TestTaskMetricsCountEveryRecord(t *testing.T) {
	const records = 1200
	job := stream.NewJob("metrics", 2, 0)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: records, Splits: 2, Rate: 300})
	stream.Print(stream.Reduce(stream.KeyBy(nums, func(v int64) int64 { return v % 5 }), "print-sum", func(a, b int64) int64 { return a + b }), "print", io.Discard)
	am := newFakeAM(t, job, 2)
	am.checkpointing = true // the subtasks stay until a final checkpoint no one triggers
	am.deploy(2)

	sum := func() (in, out map[string]exec.SubtaskMetrics) {
		in, out = map[string]exec.SubtaskMetrics{}, map[string]exec.SubtaskMetrics{}
		for _, tm := range am.tms {
			for _, m := range tm.exec.Metrics() {
				agg, v := out, m.Vertex
				if v != "numbers" { // the consumer chain: print-sum -> print
					agg, v = in, "consumer"
				}
				s := agg[v]
				s.RecordsIn += m.RecordsIn
				s.RecordsOut += m.RecordsOut
				s.BytesIn += m.BytesIn
				s.BytesOut += m.BytesOut
				agg[v] = s
			}
		}
		return in, out
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, out := sum()
		if n := out["numbers"].RecordsOut; n > 0 {
			if n >= 100 { // a batch is 256: the first sample must come long before one fills
				t.Fatalf("the first sample with records sent shows %d: the source's counts were not published while it waited", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no record counted in a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		in, out := sum()
		src, dst := out["numbers"], in["consumer"]
		if src.RecordsOut == records && dst.RecordsIn == records {
			if src.RecordsIn != records || src.BytesOut == 0 || dst.BytesIn < src.BytesOut {
				t.Fatalf("source %+v, consumer %+v: want %d records in and out and every byte sent received (the consumer counts control messages too)", src, dst, records)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("source %+v, consumer %+v after a minute: want %d records out and in", src, dst, records)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
