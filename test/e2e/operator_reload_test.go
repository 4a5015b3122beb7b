package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

const minIncreaseKey = "jobmanager.adaptive-scheduler.min-parallelism-increase"

// TestOperatorReloadMinParallelismIncrease starts a reactive job with bin/standalone-job.sh
// and two bin/taskmanager.sh TaskManagers, then edits the running AM's flink-conf.yaml:
// first with a broken file (kept out, the job runs on), then raising
// min-parallelism-increase above what one more TaskManager adds. One more TaskManager then
// leaves the job as it is; a second one rescales it, straight past the parallelism the
// first alone would have given.
func TestOperatorReloadMinParallelismIncrease(t *testing.T) {
	s := newScripted(t,
		"execution-mode: reactive",
		"taskmanager.numberOfTaskSlots: 1",
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling: 0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout: 0 s",
		"restart-strategy.type: fixed-delay",
		"restart-strategy.fixed-delay.attempts: 1000",
		"restart-strategy.fixed-delay.delay: 10 ms",
		"heartbeat.timeout: 30 min",
	)
	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName, "--cars", "8")
	s.mustRun("taskmanager.sh", "start")
	s.mustRun("taskmanager.sh", "start")
	id := s.jobID()
	d := s.waitRunning(id, 2)
	vertices := len(d.Vertices)
	if got, err := s.configInForce(minIncreaseKey); err != nil || got != "1" {
		t.Fatalf("%s in force before the edit = %q, %v; want the default 1", minIncreaseKey, got, err)
	}

	// A file that does not parse keeps the configuration in force.
	original := s.readConf()
	s.writeConf(original + minIncreaseKey + ": [2\n")
	testkit.WaitFor(t, "the AM to reject the broken file", func() (bool, error) {
		return strings.Contains(s.amLog(), "configuration reload failed"), nil
	})
	if log := s.amLog(); !strings.Contains(log, "flink-conf.yaml:") {
		t.Errorf("the rejection does not say where the file is wrong:\n%s", lastLines(log, 5))
	}
	if got, _ := s.configInForce(minIncreaseKey); got != "1" {
		t.Fatalf("%s in force after a broken file = %q, want 1", minIncreaseKey, got)
	}

	// With slot sharing one more 1-slot TaskManager adds one subtask to each vertex; ask
	// for one more than that.
	want := vertices + 1
	s.writeConf(original + fmt.Sprintf("%s: %d\n", minIncreaseKey, want))
	testkit.WaitFor(t, "the AM to apply the new "+minIncreaseKey, func() (bool, error) {
		got, err := s.configInForce(minIncreaseKey)
		return got == strconv.Itoa(want), err
	})
	if log := s.amLog(); !strings.Contains(log, `msg="configuration key reloaded" `) || !strings.Contains(log, "key="+minIncreaseKey) {
		t.Errorf("the AM did not log the reloaded key:\n%s", lastLines(log, 10))
	}

	s.mustRun("taskmanager.sh", "start")
	s.waitTaskManagers(3)
	// The increase (one per vertex) is below the new minimum: the job must stay as it is.
	// Watching it for a while can only miss a wrong rescale, never invent one.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		d, err := s.job(id)
		if err != nil {
			t.Fatal(err)
		}
		if d.State == "RUNNING" && testkit.RunningAt(d, 2) != nil {
			t.Fatalf("a third TaskManager rescaled the job to %+v although %s is %d", d.Vertices, minIncreaseKey, want)
		}
	}

	s.mustRun("taskmanager.sh", "start")
	s.waitRunning(id, 4)
	var history struct {
		Rescales []struct {
			Outcome  string `json:"outcome"`
			Vertices []struct {
				After int `json:"after"`
			} `json:"vertices"`
		} `json:"rescales"`
	}
	if err := s.get("/jobs/"+id+"/rescales", &history); err != nil {
		t.Fatal(err)
	}
	for _, r := range history.Rescales {
		for _, v := range r.Vertices {
			if v.After == 3 && r.Outcome == "COMPLETED" {
				t.Fatalf("rescale history %+v has a rescale to parallelism 3", history.Rescales)
			}
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
