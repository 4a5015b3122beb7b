//go:build chaos

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/chaos"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// ciYARNChaosSeeds are the seeds CI runs on the shared YARN mini-cluster.
const ciYARNChaosSeeds = "1"

var yarnChaosSpec = chaos.Spec{Steps: 6, MinWait: 500 * time.Millisecond, MaxWait: 3 * time.Second, MaxPause: 2 * time.Second}

// TestChaosYARN is TestChaosLocal on the YARN mini-cluster: CheckableCount in up to 3
// TaskManager containers on the two NodeManagers, per seed TaskManager processes killed,
// frozen and killed mid-checkpoint, a NodeManager evacuated (the previous block lifted
// first, so one node always stays usable), the AM killed once (attempt 2 recovers the job
// from HDFS), a TaskManager killed during the final output, then the exact answer.
func TestChaosYARN(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	for _, seed := range chaosSeeds(t, ciYARNChaosSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runYARNChaos(t, env, seed) })
	}
}

type yarnChaos struct {
	t       *testing.T
	j       *chaos.Journal
	env     *hadooptest.Env
	run     *yarnRun
	seed    uint64
	job     string
	out     string
	track   string // the REST address of the current AM attempt
	blocked string // the node the run blocked last ("" : none)
	amKills int
}

func runYARNChaos(t *testing.T, env *hadooptest.Env, seed uint64) {
	j := chaos.NewJournal(t.Output(), seed, fmt.Sprintf("make chaos SEED=%d", seed))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos journal of seed %d:\n%s", seed, j.String())
		}
	})
	out := t.TempDir()
	args := []string{"--records", "100000", "--keys", "7", "--rate", "1500", "--output", out}
	run := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2", "-Dslotmanager.number-of-slots.max=3"}, args)
	r := &yarnChaos{t: t, j: j, env: env, run: run, seed: seed, out: out, track: run.track}
	r.job = run.jobID(t)
	keepContainerLogs(t, j, env, run.app, seed)
	j.Printf("application %s, AM %s, job %s, job args %q", run.app, run.track, r.job, args)
	waitYarnRunning(t, r.track, r.job, 3, nil)
	testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) {
		s, err := r.checkpoints()
		return err == nil && s.Counts.Completed > 0, err
	})
	plan := chaos.Plan(seed, yarnChaosSpec)
	for i, a := range plan {
		j.Printf("plan %2d: %s", i, a)
	}
	for i, a := range plan {
		if finalBegun(out, chaos.FinalEarly) {
			j.Printf("the final output has begun: the rest of the plan is skipped")
			break
		}
		j.Printf("step %d: %s", i, a)
		r.do(i, a)
		waitUnlessFinal(out, a.Wait)
	}
	r.unblock()
	r.finalKill()
	run.wait(t, chaosFinalDeadline)
	testkit.CheckExactOutput(t, out, args)
	rep, err := appReport(env, run.app)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := int32(1+r.amKills), rep.GetCurrentApplicationAttemptId().GetAttemptId(); got != want {
		t.Fatalf("the application finished in attempt %d, want %d (%d AM kills)", got, want, r.amKills)
	}
	j.Printf("application finished in attempt %d; committed output is exact", rep.GetCurrentApplicationAttemptId().GetAttemptId())
	if left := hiddenFiles(out); len(left) > 0 {
		j.Printf("leftover files in the output directory after the job: %v", left)
	}
	checkRejections(t, j, env, run.app)
}

// chaosStrictEnv makes the chaos suite fail on known defects besides the exact answer.
// Not in CI yet: on YARN, TaskManagers released by an evacuation still reconnect and are
// rejected ("the AM rejected this TaskManager; exiting", issue 10 item 7), in every YARN
// seed tried (1-6). `make chaos TIDE_CHAOS_STRICT=1` shows it.
const chaosStrictEnv = "TIDE_CHAOS_STRICT"

// checkRejections journals every TaskManager of app that exited because the AM rejected
// it: a TaskManager the AM released or evacuated must get its Disconnect and leave
// quietly. Under TIDE_CHAOS_STRICT=1 any such exit fails the test.
func checkRejections(t *testing.T, j *chaos.Journal, env *hadooptest.Env, app string) {
	t.Helper()
	var lines []string
	for _, f := range containerLogs(env, app) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "the AM rejected this TaskManager") {
				lines = append(lines, filepath.Base(filepath.Dir(f))+": "+l)
			}
		}
	}
	for _, l := range lines {
		j.Printf("rejected TaskManager: %s", l)
	}
	if len(lines) > 0 && os.Getenv(chaosStrictEnv) == "1" {
		t.Errorf("%d TaskManagers exited rejected by the AM instead of disconnected (issue 10 item 7):\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

func (r *yarnChaos) checkpoints() (testkit.CheckpointStats, error) {
	var s testkit.CheckpointStats
	err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+r.job+"/checkpoints", &s)
	return s, err
}

// pick chooses among the TaskManagers the current AM lists, sorted by id, leaving out those
// on the blocked node; "" when there is none (the AM may be recovering).
func (r *yarnChaos) pick(p uint32) tmInfo {
	tms, err := taskManagers(r.track)
	if err != nil {
		r.j.Printf("listing TaskManagers: %v", err)
		return tmInfo{}
	}
	var ok []tmInfo
	for _, tm := range tms {
		if tm.Node != r.blocked {
			ok = append(ok, tm)
		}
	}
	if len(ok) == 0 {
		r.j.Printf("no unblocked TaskManager registered (%v)", tms)
		return tmInfo{}
	}
	sort.Slice(ok, func(i, k int) bool { return ok[i].ID < ok[k].ID })
	return ok[int(p%uint32(len(ok)))]
}

// signalTM sends sig to TaskManager id's process; false when it has none (released).
func (r *yarnChaos) signalTM(id string, sig syscall.Signal) bool {
	pid, _ := findTaskManager(r.run.app, id)
	if pid == 0 {
		r.j.Printf("TaskManager %s has no process (released): no %s", id, sigName(sig))
		return false
	}
	if err := syscall.Kill(pid, sig); err != nil {
		r.t.Fatalf("%s to TaskManager %s (pid %d): %v", sigName(sig), id, pid, err)
	}
	r.j.Printf("%s %s (pid %d)", sigName(sig), id, pid)
	return true
}

func (r *yarnChaos) do(step int, a chaos.Action) {
	r.t.Helper()
	if a.Kind == chaos.KillAM {
		r.killAM()
		return
	}
	tm := r.pick(a.Pick)
	if tm.ID == "" {
		r.j.Printf("step %d skipped: no TaskManager to act on", step)
		return
	}
	r.j.Printf("target %s on node %s", tm.ID, tm.Node)
	switch a.Kind {
	case chaos.Kill:
		killTaskManagerUnlessReleased(r.t, r.run.app, r.track, tm.ID)
		r.j.Printf("SIGKILL %s", tm.ID)
	case chaos.Pause:
		if r.signalTM(tm.ID, syscall.SIGSTOP) {
			time.Sleep(a.Pause) // the freeze itself is the fault
			r.signalTM(tm.ID, syscall.SIGCONT)
		}
	case chaos.Evacuate:
		r.evacuate(step, a, tm.Node)
	case chaos.KillMidCheckpoint:
		r.killMidCheckpoint(tm.ID)
	default:
		r.t.Fatalf("action %s has no meaning on YARN", a)
	}
}

// evacuate blocks node with MARK_BLOCKED_AND_EVACUATE_TASKS after lifting the run's
// previous block, so the other NodeManager always stays usable.
func (r *yarnChaos) evacuate(step int, a chaos.Action, node string) {
	r.t.Helper()
	cl, err := api.NewClient(api.Config{Address: r.track})
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.unblock()
	cause := fmt.Sprintf("chaos seed %d step %d", r.seed, step)
	switch a.Via {
	case chaos.ViaREST:
		n, err := cl.BlockNode(ctx, node, api.BlockNodeRequest{Action: api.ActionMarkBlockedAndEvacuate, Cause: cause})
		if err != nil {
			r.t.Fatalf("PUT /blocklist/nodes/%s: %v", node, err)
		}
		r.j.Printf("REST blocked %s (%s)", node, n.Action)
	case chaos.ViaCLI:
		out, err := tideCmd(r.t, tideBin, 30*time.Second, "blocklist", "add", node, "--evacuate", "--timeout", "30m", "--cause", cause, "-m", r.track)
		if err != nil {
			r.t.Fatalf("tide blocklist add %s --evacuate: %v\n%s", node, err, out)
		}
		r.j.Printf("CLI: %s", strings.TrimSpace(out))
	}
	r.blocked = node
}

// unblock lifts the run's block, if any: before the next evacuation, so that one
// NodeManager always stays usable, and before the final output, so that the job ends at
// full parallelism.
func (r *yarnChaos) unblock() {
	r.t.Helper()
	if r.blocked == "" {
		return
	}
	cl, err := api.NewClient(api.Config{Address: r.track})
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.UnblockNode(ctx, r.blocked); err != nil {
		r.t.Fatalf("DELETE /blocklist/nodes/%s: %v", r.blocked, err)
	}
	r.j.Printf("unblocked %s", r.blocked)
	r.blocked = ""
}

// killMidCheckpoint is localChaos.killMidCheckpoint for a TaskManager container.
func (r *yarnChaos) killMidCheckpoint(id string) {
	r.t.Helper()
	if !settle(r.t, r.j, testkit.RESTGetter(r.track), r.job, r.out) {
		return
	}
	before, err := r.checkpoints()
	if err != nil {
		r.j.Printf("reading checkpoints: %v", err)
	}
	if !r.signalTM(id, syscall.SIGSTOP) {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := r.checkpoints()
		if p := inProgressAfter(s, before); err == nil && p > 0 {
			r.j.Printf("checkpoint %d in progress with %s frozen", p, id)
			break
		}
		if time.Now().After(deadline) {
			r.j.Printf("no checkpoint started within 10s with %s frozen (last error %v); killing it anyway", id, err)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.signalTM(id, syscall.SIGKILL)
}

// killAM SIGKILLs the AM of attempt 1 and waits for attempt 2's REST API.
func (r *yarnChaos) killAM() {
	r.t.Helper()
	killAM(r.t, r.run.app)
	r.amKills++
	r.j.Printf("SIGKILL the AM of attempt 1 (%s)", r.track)
	r.track = waitAttempt2(r.t, r.env, r.run.app, r.track)
	r.j.Printf("attempt 2 serves at %s", r.track)
}

// finalKill is localChaos.finalKill for TaskManager containers (YARN replaces the
// victim). The victim's process is looked up ahead of time and refreshed every half
// second, so that the kill follows the first sign of the final output within milliseconds.
func (r *yarnChaos) finalKill() {
	r.t.Helper()
	kind, pick := chaos.Final(r.seed)
	r.j.Printf("final: waiting for the sink's final output (%s kill)", kind)
	deadline := time.Now().Add(chaosFinalDeadline)
	var victim tmInfo
	var pid int
	var looked time.Time
	for !finalBegun(r.out, kind) {
		select {
		case err := <-r.run.done:
			r.run.done <- err // for run.wait
			r.j.Printf("tide run ended before the %s final kill", kind)
			return
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no final output in %s after %s", r.out, chaosFinalDeadline)
		}
		if time.Since(looked) > 500*time.Millisecond {
			looked = time.Now()
			if tms, err := taskManagers(r.track); err == nil && len(tms) > 0 {
				sort.Slice(tms, func(i, k int) bool { return tms[i].ID < tms[k].ID })
				victim = tms[int(pick%uint32(len(tms)))]
				pid, _ = findTaskManager(r.run.app, victim.ID)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if pid == 0 {
		r.j.Printf("no TaskManager process to kill during the final output")
		return
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		r.j.Printf("SIGKILL %s (pid %d) during the final output: %v", victim.ID, pid, err)
		return
	}
	r.j.Printf("SIGKILL %s (pid %d)", victim.ID, pid)
	r.j.Printf("killed %s during the final output; output directory then: %v", victim.ID, dirNames(r.out))
}

// keepContainerLogs copies the application's container logs and the journal to
// $TIDE_CHAOS_KEEP/yarn-seed-<seed>/<container>/ when the test ends, if the variable is set.
func keepContainerLogs(t *testing.T, j *chaos.Journal, env *hadooptest.Env, app string, seed uint64) {
	keep := os.Getenv(chaosKeepEnv)
	if keep == "" {
		return
	}
	t.Cleanup(func() {
		dst := filepath.Join(keep, fmt.Sprintf("yarn-seed-%d", seed))
		if err := os.RemoveAll(dst); err != nil {
			t.Errorf("keeping the logs: %v", err)
			return
		}
		for _, f := range containerLogs(env, app) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // a container still being cleaned up
			}
			to := filepath.Join(dst, filepath.Base(filepath.Dir(f)), filepath.Base(f))
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				t.Errorf("keeping the logs: %v", err)
				return
			}
			if err := os.WriteFile(to, b, 0o644); err != nil {
				t.Errorf("keeping the logs: %v", err)
				return
			}
		}
		if err := os.MkdirAll(dst, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(dst, "chaos-journal.log"), []byte(j.String()+"\n"), 0o644)
		}
		t.Logf("container logs and journal of seed %d kept in %s", seed, dst)
	})
}
