package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// checkpointHistory is the part of GET /jobs/:id/checkpoints the benchmark reads.
type checkpointHistory struct {
	History []struct {
		ID               int64  `json:"id"`
		Attempt          int64  `json:"attempt"`
		Status           string `json:"status"`
		StateSize        int64  `json:"state_size"`
		EndToEndDuration int64  `json:"end_to_end_duration"`
	} `json:"history"`
}

// checkpointDurations runs CheckableCount at parallelism 2 with checkpoints under uri
// and returns the end-to-end durations of n completed checkpoints of one attempt (from
// trigger to _metadata durable) and their mean state size.
func checkpointDurations(b *testing.B, uri string, st storage.Storage, n int) ([]time.Duration, int64) {
	out := b.TempDir()
	args := []string{"--records", "100000000", "--keys", "1000", "--rate", "20000", "--output", out}
	h := startJobAt(b, uri, st, examples.CheckableCountName, args, 2, "200 ms")
	defer h.stop()
	d := h.waitRunning(2)
	h.waitCompletedIn(d.Attempt)
	seen := map[int64]bool{}
	var durs []time.Duration
	var size int64
	testkit.WaitFor(b, fmt.Sprintf("%d checkpoints of attempt %d", n, d.Attempt), func() (bool, error) {
		var hist checkpointHistory
		if err := h.rest("/jobs/"+h.id+"/checkpoints", &hist); err != nil {
			return false, err
		}
		for _, e := range hist.History {
			if e.Status == "COMPLETED" && e.Attempt == d.Attempt && !seen[e.ID] && len(durs) < n {
				seen[e.ID] = true
				durs = append(durs, time.Duration(e.EndToEndDuration)*time.Millisecond)
				size += e.StateSize
			}
		}
		return len(durs) >= n, fmt.Errorf("%d of %d checkpoints", len(durs), n)
	})
	return durs, size / int64(len(durs))
}

func mean(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t / time.Duration(len(ds))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCheckpointDurationFileVsHDFS compares, in one run, the checkpoint duration
// of CheckableCount (2 subtasks per vertex: 4 state files, _coordinator and _metadata
// per checkpoint) with file:// and with hdfs:// checkpoints on the mini-cluster.
func BenchmarkCheckpointDurationFileVsHDFS(b *testing.B) {
	env := hadooptest.Require(b)
	const perRun = 15
	var local, remote []time.Duration
	var localSize, remoteSize int64
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		st, err := storage.Open(context.Background(), "file://"+dir, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d, sz := checkpointDurations(b, "file://"+dir, st, perRun)
		st.Close()
		local, localSize = append(local, d...), sz

		uri, hst := hdfsCheckpointRoot(b, env)
		d, sz = checkpointDurations(b, uri, hst, perRun)
		remote, remoteSize = append(remote, d...), sz
	}
	ratio := float64(mean(remote)) / float64(mean(local))
	b.ReportMetric(float64(mean(local).Microseconds())/1000, "file-ms/ckpt")
	b.ReportMetric(float64(mean(remote).Microseconds())/1000, "hdfs-ms/ckpt")
	b.ReportMetric(ratio, "hdfs/file")
	b.Logf("checkpoint duration over %d checkpoints each: file:// mean %s median %s (%d B state); hdfs:// mean %s median %s (%d B state); hdfs/file = %.2f",
		len(local), mean(local), median(local), localSize, mean(remote), median(remote), remoteSize, ratio)
}
