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
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/chaos"
)

// The chaos suite runs only with `make chaos` (go test -tags chaos): it is slow by design.
// CI runs ciChaosSeeds; `make chaos SEED=<n>` (TIDE_CHAOS_SEEDS) replays any other.
const ciChaosSeeds = "1 2 3"

// chaosFinalDeadline bounds the end of a chaos run (end of input, final commit, the
// restart after the final kill); only a hang should ever reach it.
const chaosFinalDeadline = 4 * time.Minute

func chaosSeeds(t *testing.T, ci string) []uint64 {
	t.Helper()
	s := os.Getenv(chaos.SeedsEnv)
	if s == "" {
		s = ci
	}
	seeds, err := chaos.ParseSeeds(s)
	if err != nil {
		t.Fatal(err)
	}
	return seeds
}

// TestChaosLocal runs CheckableCount on a local cluster of 3 TaskManagers (nodes local-1..3)
// and, per seed, a schedule of SIGKILLs, starts, SIGSTOP+SIGCONT freezes (zombies frozen
// past the heartbeat timeout among them), blocklist evacuations (REST or CLI) and
// TaskManagers killed while a checkpoint waits for them; then a TaskManager is killed while
// the sink writes and commits the final output, and the committed output must be the exact
// answer. Every action is printed with its time.
func TestChaosLocal(t *testing.T) {
	for _, seed := range chaosSeeds(t, ciChaosSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runLocalChaos(t, seed) })
	}
}

var localChaosSpec = chaos.Spec{Steps: 10, Initial: 3, Max: 4, Local: true,
	MinWait: 300 * time.Millisecond, MaxWait: 2 * time.Second, MaxPause: 2 * time.Second,
	ZombiePause: 4 * time.Second}

// localChaosSettings are reactive's with a heartbeat timeout that a zombie's freeze
// (localChaosSpec.ZombiePause) outlasts; ordinary pauses (at most 2.1 s) stay below it.
func localChaosSettings(ckpt string) []string {
	var out []string
	for _, kv := range reactive(ckpt, "200 ms") {
		if !strings.HasPrefix(kv, "heartbeat.timeout=") {
			out = append(out, kv)
		}
	}
	return append(out, "heartbeat.interval=500 ms", "heartbeat.timeout=3 s")
}

func runLocalChaos(t *testing.T, seed uint64) {
	j := chaos.NewJournal(t.Output(), seed, fmt.Sprintf("make chaos SEED=%d", seed))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos journal of seed %d:\n%s", seed, j.String())
		}
	})
	out := t.TempDir()
	args := []string{"--records", "100000", "--keys", "11", "--rate", "1500", "--output", out}
	ckpt := t.TempDir()
	c := startCluster(t, examples.CheckableCountName, args, localChaosSpec.Initial, localChaosSettings(ckpt))
	j.Printf("cluster: AM REST %s, logs %s, job args %q", c.RESTAddress(), c.LogDir(), args)
	keepLogs(t, j, c.LogDir(), seed)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, localChaosSpec.Initial)
	waitCheckpointIn(t, c, id, d.Attempt)
	cl, err := api.NewClient(api.Config{Address: c.RESTAddress()})
	if err != nil {
		t.Fatal(err)
	}
	r := &localChaos{t: t, j: j, c: c, cl: cl, seed: seed, job: id, out: out, gone: map[string]bool{}}
	plan := chaos.Plan(seed, localChaosSpec)
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
	r.topUp(localChaosSpec.Initial)
	r.finalKill()
	waitExact(t, c, chaosFinalDeadline, out, args)
	j.Printf("job finished; committed output is exact")
	if left := hiddenFiles(out); len(left) > 0 {
		j.Printf("leftover files in the output directory after the job: %v", left)
	}
	// For the record (state.checkpoints.num-retained keeps one): what the job left behind.
	j.Printf("checkpoint directory after the job: %v", dirNames(filepath.Join(ckpt, id)))
}

type localChaos struct {
	t    *testing.T
	j    *chaos.Journal
	c    *standalone.LocalCluster
	cl   *api.Client
	seed uint64
	job  string
	out  string
	gone map[string]bool // TaskManagers the run blocked or made zombies: never acted on again
}

func (r *localChaos) signal(tm string, sig syscall.Signal) {
	r.t.Helper()
	if err := r.c.Signal(tm, sig); err != nil {
		r.t.Fatal(err)
	}
	r.j.Printf("%s %s", sigName(sig), tm)
}

// chaosKeepEnv names a directory that receives every run's logs (<dir>/seed-<n>/) when the
// run ends, for reading a replay by hand: `make chaos SEED=7 TIDE_CHAOS_KEEP=/tmp/chaos`.
const chaosKeepEnv = "TIDE_CHAOS_KEEP"

// keepLogs copies logDir to $TIDE_CHAOS_KEEP/seed-<seed> when the test ends (before the
// cluster's work directory is removed), if the variable is set.
func keepLogs(t *testing.T, j *chaos.Journal, logDir string, seed uint64) {
	keep := os.Getenv(chaosKeepEnv)
	if keep == "" {
		return
	}
	t.Cleanup(func() {
		dst := filepath.Join(keep, fmt.Sprintf("seed-%d", seed))
		if err := os.RemoveAll(dst); err != nil {
			t.Errorf("keeping the logs: %v", err)
			return
		}
		if err := os.CopyFS(dst, os.DirFS(logDir)); err != nil {
			t.Errorf("keeping the logs in %s: %v", dst, err)
			return
		}
		if err := os.WriteFile(filepath.Join(dst, "chaos-journal.log"), []byte(j.String()+"\n"), 0o644); err != nil {
			t.Errorf("keeping the journal: %v", err)
		}
		t.Logf("logs and journal of seed %d kept in %s", seed, dst)
	})
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSTOP:
		return "SIGSTOP"
	case syscall.SIGCONT:
		return "SIGCONT"
	}
	return sig.String()
}

func (r *localChaos) do(step int, a chaos.Action) {
	r.t.Helper()
	switch a.Kind {
	case chaos.Kill:
		r.signal(a.Target, syscall.SIGKILL)
	case chaos.Start:
		tm, err := r.c.AddTaskManager(r.t.Context())
		if err != nil {
			r.t.Fatal(err)
		}
		if tm != a.Target {
			r.t.Fatalf("started %s, the plan expected %s", tm, a.Target)
		}
		r.j.Printf("started %s on node %s", tm, chaos.NodeOf(tm))
	case chaos.Pause:
		r.signal(a.Target, syscall.SIGSTOP)
		time.Sleep(a.Pause) // the freeze itself is the fault
		r.signal(a.Target, syscall.SIGCONT)
	case chaos.Evacuate:
		r.evacuate(step, a)
	case chaos.KillMidCheckpoint:
		r.killMidCheckpoint(a.Target)
	case chaos.Zombie:
		r.signal(a.Target, syscall.SIGSTOP)
		time.Sleep(a.Pause) // past the heartbeat timeout: the AM declares it lost
		r.signal(a.Target, syscall.SIGCONT)
		r.gone[a.Target] = true
	default:
		r.t.Fatalf("action %s has no meaning on a local cluster", a)
	}
}

// evacuate blocks a.Target's node with MARK_BLOCKED_AND_EVACUATE_TASKS; the AM must accept.
func (r *localChaos) evacuate(step int, a chaos.Action) {
	r.t.Helper()
	node := chaos.NodeOf(a.Target)
	cause := fmt.Sprintf("chaos seed %d step %d", r.seed, step)
	switch a.Via {
	case chaos.ViaREST:
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n, err := r.cl.BlockNode(ctx, node, api.BlockNodeRequest{Action: api.ActionMarkBlockedAndEvacuate, Cause: cause})
		if err != nil {
			r.t.Fatalf("PUT /blocklist/nodes/%s: %v", node, err)
		}
		r.j.Printf("REST blocked %s (%s) until %d", node, n.Action, n.EndTimestamp)
	case chaos.ViaCLI:
		out, err := tideCmd(r.t, tideBin, 30*time.Second, "blocklist", "add", node, "--evacuate", "--timeout", "30m", "--cause", cause, "-m", r.c.RESTAddress())
		if err != nil {
			r.t.Fatalf("tide blocklist add %s --evacuate: %v\n%s", node, err, out)
		}
		r.j.Printf("CLI: %s", strings.TrimSpace(out))
	}
	r.gone[a.Target] = true
}

// killMidCheckpoint freezes tm, waits until a checkpoint newer than the last completed one
// is in progress (it cannot complete without tm), and SIGKILLs tm. A job that is not
// running starts no checkpoint: after 10 s without one, tm is killed anyway and the
// journal says so.
func (r *localChaos) killMidCheckpoint(tm string) {
	r.t.Helper()
	if !settle(r.t, r.j, restOf(r.c), r.job, r.out) {
		return
	}
	var before testkit.CheckpointStats
	if err := rest(r.c, "/jobs/"+r.job+"/checkpoints", &before); err != nil {
		r.t.Fatal(err)
	}
	r.signal(tm, syscall.SIGSTOP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var s testkit.CheckpointStats
		if err := rest(r.c, "/jobs/"+r.job+"/checkpoints", &s); err != nil {
			r.t.Fatal(err)
		}
		if p := inProgressAfter(s, before); p > 0 {
			r.j.Printf("checkpoint %d in progress with %s frozen", p, tm)
			break
		}
		if time.Now().After(deadline) {
			var d testkit.JobDetails
			_ = rest(r.c, "/jobs/"+r.job, &d)
			r.j.Printf("no checkpoint started within 10s with %s frozen (job %s); killing it anyway", tm, d.State)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.signal(tm, syscall.SIGKILL)
}

// settle waits until the job runs and has completed a checkpoint in its current attempt, so
// that a TaskManager frozen next holds up a checkpoint rather than a deployment (the
// coordinator triggers none until every task runs). False when the final output began
// first: the kill is then left to the final phase.
func settle(t *testing.T, j *chaos.Journal, get testkit.Getter, job, out string) bool {
	t.Helper()
	final := false
	testkit.WaitFor(t, "the job RUNNING with a checkpoint of its current attempt", func() (bool, error) {
		if finalBegun(out, chaos.FinalEarly) {
			final = true
			return true, nil
		}
		var d testkit.JobDetails
		if err := get("/jobs/"+job, &d); err != nil {
			return false, err
		}
		var s testkit.CheckpointStats
		if err := get("/jobs/"+job+"/checkpoints", &s); err != nil {
			return false, err
		}
		if d.State != "RUNNING" || s.Latest.Completed == nil || s.Latest.Completed.Attempt < d.Attempt {
			return false, fmt.Errorf("job %s in attempt %d; latest completed checkpoint %+v", d.State, d.Attempt, s.Latest.Completed)
		}
		j.Printf("job RUNNING in attempt %d, checkpoint %d completed in it", d.Attempt, s.Latest.Completed.ID)
		return true, nil
	})
	if final {
		j.Printf("the final output has begun: no kill mid-checkpoint now")
	}
	return !final
}

// inProgressAfter is the id of a checkpoint in progress that is newer than before's
// latest completed one, or 0.
func inProgressAfter(s, before testkit.CheckpointStats) int64 {
	for _, h := range s.History {
		if h.Status == "IN_PROGRESS" && (before.Latest.Completed == nil || h.ID > before.Latest.Completed.ID) {
			return h.ID
		}
	}
	return 0
}

// waitUnlessFinal lets the job run for d, or less once its final output begins.
func waitUnlessFinal(out string, d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) && !finalBegun(out, chaos.FinalEarly) {
		time.Sleep(5 * time.Millisecond)
	}
}

// finalBegun says whether the sink has begun the final output in out: any file there
// (early), or a committed part file (late). CheckableCount writes only at the end of its
// input.
func finalBegun(out string, k chaos.FinalKill) bool {
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if k == chaos.FinalEarly || !strings.HasPrefix(e.Name(), ".") {
			return true
		}
	}
	return false
}

// topUp starts TaskManagers until n usable ones run, so that the job ends at a parallelism
// that finishes its input in bounded time, scaling up on the way.
func (r *localChaos) topUp(n int) {
	r.t.Helper()
	for len(r.unblocked()) < n {
		tm, err := r.c.AddTaskManager(r.t.Context())
		if err != nil {
			r.t.Fatal(err)
		}
		r.j.Printf("started %s on node %s (back to %d TaskManagers)", tm, chaos.NodeOf(tm), n)
	}
}

// unblocked lists the running TaskManagers the run neither blocked nor made zombies, sorted.
func (r *localChaos) unblocked() []string {
	var live []string
	for _, tm := range r.c.TaskManagers() {
		if !r.gone[tm] {
			live = append(live, tm)
		}
	}
	sort.Strings(live)
	return live
}

// finalKill waits for the seed's moment of the final output and SIGKILLs one running,
// unblocked TaskManager then, starting another if none would be left.
func (r *localChaos) finalKill() {
	r.t.Helper()
	kind, pick := chaos.Final(r.seed)
	r.j.Printf("final: waiting for the sink's final output (%s kill)", kind)
	deadline := time.Now().Add(chaosFinalDeadline)
	for !finalBegun(r.out, kind) {
		select {
		case <-r.c.AMDone():
			r.j.Printf("the job ended before the %s final kill", kind)
			return
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no final output in %s after %s", r.out, chaosFinalDeadline)
		}
		time.Sleep(2 * time.Millisecond)
	}
	live := r.unblocked()
	if len(live) == 0 {
		r.t.Fatalf("no running unblocked TaskManager at the end of input: %v", r.c.TaskManagers())
	}
	victim := live[int(pick%uint32(len(live)))]
	r.signal(victim, syscall.SIGKILL)
	r.j.Printf("killed %s during the final output; output directory then: %v", victim, dirNames(r.out))
	if len(live) == 1 {
		tm, err := r.c.AddTaskManager(r.t.Context())
		if err != nil {
			r.t.Fatal(err)
		}
		r.j.Printf("started %s so the job can finish", tm)
	}
}

func dirNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func hiddenFiles(dir string) []string {
	var out []string
	for _, n := range dirNames(dir) {
		if strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out
}
