package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// BenchmarkKube times a tide cluster on the harness's control plane (make k8s-up; skipped
// without it, and unless TIDE_KUBE_BENCH=1), next to the bare binary's start: tide run --target kubernetes-application →
// job RUNNING; TaskManager pod created → its TaskManager registered (the AM's log); a
// TaskManager's process killed → job RUNNING again on a replacement pod.
func BenchmarkKube(b *testing.B) {
	if os.Getenv("TIDE_KUBE_BENCH") != "1" {
		b.Skip("TIDE_KUBE_BENCH=1 runs it (make bench does, in its Kubernetes section)")
	}
	bare := bareStart(b)
	var toRunning, toRecovered, toRegistered time.Duration
	registrations := 0
	for i := 0; i < b.N; i++ {
		k := newKubeApp(b)
		args := append(k.podSettings(), "--job-classname", "CheckableCount", "-Dslotmanager.number-of-slots.max=2")
		for _, d := range reactive(b.TempDir(), "500 ms") {
			args = append(args, "-D"+d)
		}
		start := time.Now()
		k.submit(append(args, "--", "--records", "1000000", "--keys", "5", "--rate", "500", "--output", b.TempDir())...)
		toRunning += time.Since(start)
		get := k.rest()
		jid := testkit.WaitJobID(b, get)
		d := testkit.WaitRunningAt(b, get, jid, 2)
		pods := k.waitTMPods("two TaskManager pods", podCount(2))
		start = time.Now()
		if err := k.env.KillContainer(k.ns, pods[0].Name); err != nil {
			b.Fatal(err)
		}
		testkit.WaitFor(b, "the job RUNNING at 2 again after the kill", func() (bool, error) {
			var now testkit.JobDetails
			if err := get("/jobs/"+jid, &now); err != nil {
				return false, err
			}
			err := testkit.RunningAt(now, 2)
			return err == nil && now.Attempt > d.Attempt, err
		})
		toRecovered += time.Since(start)
		am := k.amPod()
		regs := podToRegistered(b, k.env.PodLog(k.ns, am.Name, "jobmanager"))
		for _, r := range regs {
			toRegistered += r
		}
		registrations += len(regs)
		if o, err := k.tide(3*time.Minute, "cancel", "-m", k.target()); err != nil {
			b.Fatalf("tide cancel: %v\n%s", err, o)
		}
	}
	n := time.Duration(b.N)
	var reg time.Duration
	if registrations > 0 {
		reg = toRegistered / time.Duration(registrations)
	}
	b.ReportMetric(float64((toRunning / n).Milliseconds()), "ms-run-to-running")
	b.ReportMetric(float64(reg.Milliseconds()), "ms-pod-to-registered")
	b.ReportMetric(float64((toRecovered / n).Milliseconds()), "ms-kill-to-running")
	b.ReportMetric(float64(bare.Microseconds())/1000, "ms-bare-start")
	fmt.Printf("Kubernetes: tide run -> RUNNING %s; TaskManager pod created -> registered %s (mean of %d); pod's process killed -> RUNNING again %s; bare `tide --version` start: %s\n",
		(toRunning / n).Round(time.Millisecond), reg.Round(time.Millisecond), registrations, (toRecovered / n).Round(time.Millisecond), bare.Round(time.Millisecond))
}

// podToRegistered reads the AM's log (slog text) and returns, for each TaskManager pod it
// created, the time from "created TaskManager pod" to "TaskManager registered".
func podToRegistered(tb testing.TB, log string) []time.Duration {
	tb.Helper()
	f, err := os.Open(filepath.Clean(log))
	if err != nil {
		tb.Fatalf("the AM's log: %v", err)
	}
	defer f.Close()
	created := map[string]time.Time{}
	var out []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		at, err := time.Parse(time.RFC3339Nano, field(line, "time"))
		if err != nil {
			continue
		}
		switch {
		case strings.Contains(line, `msg="created TaskManager pod"`):
			created[field(line, "pod")] = at
		case strings.Contains(line, `msg="TaskManager registered"`):
			if c, ok := created[field(line, "taskmanager")]; ok {
				out = append(out, at.Sub(c))
			}
		}
	}
	return out
}

// field is key=value of a slog text line (unquoted values).
func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
