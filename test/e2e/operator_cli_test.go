package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestOperatorCLI drives a job started by the bin scripts through the tide CLI only: list,
// status, rescale (FLIP-291 resource requirements), checkpoint, rescales, taskmanagers and
// cancel, checking the CLI's exit codes on the way.
func TestOperatorCLI(t *testing.T) {
	s := newScripted(t,
		"slot.idle.timeout: 1 h",
		"taskmanager.numberOfTaskSlots: 2",
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling: 0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout: 0 s",
		"jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout: 0 s",
		"restart-strategy.type: fixed-delay",
		"restart-strategy.fixed-delay.attempts: 1000",
		"restart-strategy.fixed-delay.delay: 10 ms",
		"heartbeat.timeout: 30 min",
		"state.checkpoints.dir: file://"+t.TempDir(),
		"execution.checkpointing.interval: 1 s",
	)
	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName, "--cars", "8")
	s.mustRun("taskmanager.sh", "start")
	s.mustRun("taskmanager.sh", "start")
	s.waitTaskManagers(2)

	// list: the one job, by name, in a table and as JSON.
	var jobs struct {
		Jobs []struct {
			JID   string `json:"jid"`
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"jobs"`
	}
	testkit.WaitFor(t, "tide list to show the job RUNNING", func() (bool, error) {
		out, err := s.tide("list", "--json")
		if err != nil {
			return false, err
		}
		if err := json.Unmarshal([]byte(out), &jobs); err != nil {
			return false, err
		}
		return len(jobs.Jobs) == 1 && jobs.Jobs[0].State == "RUNNING", nil
	})
	id := jobs.Jobs[0].JID
	out, err := s.tide("list")
	if err != nil || !strings.Contains(out, "JOB ID") || !strings.Contains(out, id) {
		t.Fatalf("tide list: %v\n%s", err, out)
	}

	// status by name: the job's own parallelism is 1; 2 TaskManagers x 2 slots are there.
	status := func() (jobStatusJSON, string) {
		t.Helper()
		out, err := s.tide("status", examples.TopSpeedWindowingName, "--json")
		if err != nil {
			t.Fatalf("tide status --json: %v\n%s", err, out)
		}
		var st jobStatusJSON
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("tide status --json: %v\n%s", err, out)
		}
		return st, out
	}
	testkit.WaitFor(t, "every vertex at 1", func() (bool, error) {
		st, _ := status()
		return st.Job.State == "RUNNING" && st.allAt(1), nil
	})
	st, raw := status()
	if len(st.Job.Vertices) < 2 {
		t.Fatalf("want a job with several vertices: %s", raw)
	}
	out, err = s.tide("status", id[:8])
	if err != nil || !strings.Contains(out, "Status:    RUNNING") || !strings.Contains(out, "1..1") {
		t.Fatalf("tide status by id prefix: %v\n%s", err, out)
	}

	// status shows each vertex's task metrics once the TaskManagers sent them: records per
	// second in and out, busy and back-pressured time.
	testkit.WaitFor(t, "tide status to show the vertices' rates", func() (bool, error) {
		out, err := s.tide("status", id)
		if err != nil {
			return false, err
		}
		if !strings.Contains(strings.Join(strings.Fields(out), " "), "IN/S OUT/S BUSY BACKPRESSURE") || !statusRatesRE.MatchString(out) {
			return false, fmt.Errorf("no vertex with records flowing in tide status:\n%s", out)
		}
		return true, nil
	})

	// rescale one vertex up to 2..4 and wait for it: the 4 slots allow 4; the others keep 1.
	v := st.Job.Vertices[len(st.Job.Vertices)-1].ID
	out, err = s.tide("rescale", id, "--vertex", v, "--parallelism", "2..4", "--wait", "60s")
	if err != nil || !strings.Contains(out, "parallelism 2..4 (was 1..1)") {
		t.Fatalf("tide rescale: %v\n%s", err, out)
	}
	st, raw = status()
	for _, vx := range st.Job.Vertices {
		want := 1
		if vx.ID == v {
			want = 4
		}
		if vx.Parallelism != want {
			t.Errorf("after the rescale vertex %s runs at %d, want %d: %s", vx.ID, vx.Parallelism, want, raw)
		}
	}
	if b := st.Requirements[v].Parallelism; b.LowerBound != 2 || b.UpperBound != 4 {
		t.Errorf("resource requirements of %s = %+v, want 2..4", v, b)
	}
	// A usage mistake is exit 2, a refusal by the AM exit 1.
	if out, err := s.tide("rescale", id, "--vertex", v, "--parallelism", "3..2"); exitCode(err) != 2 {
		t.Errorf("rescale with lower > upper: exit %d, want 2\n%s", exitCode(err), out)
	}
	if out, err := s.tide("rescale", id, "--vertex", v, "--parallelism", "1..100000"); exitCode(err) != 1 || !strings.Contains(out, "400") {
		t.Errorf("rescale above maxParallelism: exit %d, want 1 with the AM's 400\n%s", exitCode(err), out)
	}

	// checkpoint: triggered, polled, completed.
	out, err = s.tide("checkpoint", id)
	if err != nil || !strings.Contains(out, "triggered (trigger id") || !strings.Contains(out, "completed.") {
		t.Fatalf("tide checkpoint: %v\n%s", err, out)
	}

	// rescales: the initial schedule and the requested change, with their triggers.
	out, err = s.tide("rescales", id)
	if err != nil || !strings.Contains(out, "INITIAL_SCHEDULE") || !strings.Contains(out, "UPDATE_REQUIREMENT") {
		t.Errorf("tide rescales: %v\n%s", err, out)
	}
	out, err = s.tide("taskmanagers")
	if err != nil || strings.Count(out, "\n") != 3 {
		t.Errorf("tide taskmanagers: want a header and 2 rows: %v\n%s", err, out)
	}

	// cancel: the job ends CANCELED and the AM exits; then the CLI reports it unreachable.
	amPids := s.pids("standalonejob")
	out, err = s.tide("cancel", examples.TopSpeedWindowingName, "--wait", "60s")
	if err != nil || !strings.Contains(out, "is CANCELED") {
		t.Fatalf("tide cancel: %v\n%s", err, out)
	}
	testkit.WaitFor(t, "the AM process to exit", func() (bool, error) {
		for _, p := range amPids {
			if alive(p) {
				return false, nil
			}
		}
		return true, nil
	})
	if out, err := s.tide("list"); exitCode(err) != 3 || !strings.Contains(out, "is it running?") {
		t.Errorf("tide list after the AM exited: exit %d, want 3\n%s", exitCode(err), out)
	}
	if !strings.Contains(s.amLog(), "status=CANCELED") {
		t.Errorf("the AM did not log the job CANCELED:\n%s", lastLines(s.amLog(), 10))
	}
}

// jobStatusJSON is what tide status --json prints.
type jobStatusJSON struct {
	Job struct {
		State    string `json:"state"`
		Vertices []struct {
			ID          string `json:"id"`
			Parallelism int    `json:"parallelism"`
		} `json:"vertices"`
	} `json:"job"`
	Requirements map[string]struct {
		Parallelism struct {
			LowerBound int `json:"lowerBound"`
			UpperBound int `json:"upperBound"`
		} `json:"parallelism"`
	} `json:"resource-requirements"`
}

func (s jobStatusJSON) allAt(p int) bool {
	if len(s.Job.Vertices) == 0 {
		return false
	}
	for _, v := range s.Job.Vertices {
		if v.Parallelism != p {
			return false
		}
	}
	return true
}

// statusRatesRE matches a vertex row of tide status with records flowing in and out, its
// busy share and its back-pressure level.
var statusRatesRE = regexp.MustCompile(`(?m)RUNNING\s+[1-9]\d*\s+[1-9]\d*\s+\d+%\s+\d+% (ok|low|high)\s*$`)
