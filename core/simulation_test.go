package core_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/coretest"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/core/restart"
)

var simRuns = flag.Int("sim.runs", 10000, "random event sequences in TestSimulation")

// TestSimulation drives the scheduler with random event sequences (fixed seeds) and
// checks the invariants after every step:
//   - a deployment uses distinct, registered slots, never on a blocked node, never more
//     slots than registered, and at most one subtask of a vertex per slot;
//   - every vertex runs within its bounds;
//   - no slot holds running subtasks of two attempts (old slots are free before reuse);
//   - a stale timer produces no effect and no transition;
//   - no deployment below what registered + pending resources allow while the
//     stabilization bound has not passed: a deployment made while workers are on their
//     way (requested from the driver or expected by name) and the desired slots are not
//     there comes from WaitingForResources after it waited the submission stabilization
//     timeout (or the resource-wait timeout);
//   - with KeepTaskManagers (standalone) no TaskManager is released or refused except
//     one whose heartbeat timed out (or after the job ended);
//   - cancel always reaches a terminal status;
//   - warm-up and standby copies (state.warmup.timeout, num.standby.replicas; see
//     checkWarmups) go only to registered TaskManagers off blocked nodes, a planned round
//     holds at most max.warmup.replicas copies, a standby copy is never on its range's
//     owner, and a warm-up report never fails the job.
func TestSimulation(t *testing.T) {
	cov := coverage{states: map[string]int{}}
	for seed := 0; seed < *simRuns; seed++ {
		if err := simulate(uint64(seed), &cov); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	t.Logf("coverage: %d deploys (%d with workers on their way), %d rescales, %d evacuations, %d switches after a warm-up, transitions %v",
		cov.deploys, cov.inflightDeploys, cov.rescales, cov.evacuations, cov.warmupSwitches, cov.states)
	// The generator must keep reaching every state and the interesting paths, or the
	// invariants above check nothing.
	if *simRuns >= 1000 {
		for _, tr := range []string{"Created -> WaitingForResources", "WaitingForResources -> Executing", "Executing -> Restarting",
			"Restarting -> Executing", "Restarting -> WaitingForResources", "Executing -> Canceling", "Executing -> Failing",
			"Failing -> Finished", "Canceling -> Finished", "WaitingForResources -> Finished", "Restarting -> Canceling"} {
			if cov.states[tr] == 0 {
				t.Errorf("no sequence made the transition %s", tr)
			}
		}
		if cov.inflightDeploys == 0 {
			t.Errorf("no deployment with workers on their way in %d sequences: the stabilization invariant checks nothing", *simRuns)
		}
		if cov.warmupSwitches == 0 {
			t.Errorf("no switch after a warm-up in %d sequences: the warm-up invariants check little", *simRuns)
		}
		if cov.rescales == 0 || cov.evacuations == 0 {
			t.Errorf("no rescale (%d) or no evacuation (%d) in %d sequences", cov.rescales, cov.evacuations, *simRuns)
		}
	}
}

type coverage struct {
	deploys, rescales, evacuations int
	inflightDeploys                int
	warmupSwitches                 int
	states                         map[string]int
}

type sim struct {
	rng       *rand.Rand
	env       *coretest.Env
	reactive  bool
	vertices  []jobgraph.Vertex
	cancelled map[core.AttemptID]bool
	err       error
	version   uint64
	steps     int
	// the sim's own model of what is on its way, and of when WaitingForResources began
	pending         int
	expected        map[core.TaskManagerID]bool
	waitStart       time.Time
	inflightDeploys int
	// warm-ups: a second random stream (so sequences without them are unchanged), the
	// last WarmUp of every round still going, and how many rounds switched
	wrng     *rand.Rand
	rounds   map[int]core.WarmUp
	switches int
	// reported: the copies of each round the simulation has reported on (a copy caught up
	// or failed no longer counts against max.warmup.replicas; the core counts only those
	// reported at the newest checkpoint, so this bound is the looser one)
	reported map[int]map[core.WarmupTask]bool
}

func randomGraph(rng *rand.Rand) jobgraph.JobGraph {
	g := jobgraph.JobGraph{Name: "sim", Type: jobgraph.Streaming}
	n := 1 + rng.IntN(3)
	for i := 0; i < n; i++ {
		p := 1 + rng.IntN(6)
		v := jobgraph.Vertex{ID: fmt.Sprintf("v%d", i), Parallelism: p, SlotSharingGroup: fmt.Sprintf("g%d", rng.IntN(2))}
		if rng.IntN(3) == 0 {
			v.LowerBound = 1 + rng.IntN(p)
		}
		if rng.IntN(4) == 0 {
			v.MaxParallelism = p + rng.IntN(8)
		}
		g.Vertices = append(g.Vertices, v)
		if i > 0 {
			g.Edges = append(g.Edges, jobgraph.Edge{From: fmt.Sprintf("v%d", i-1), To: v.ID, Kind: jobgraph.Hash})
		}
	}
	return g
}

func randomOptions(rng *rand.Rand) core.Options {
	o := core.DefaultOptions()
	pick := func(ds ...time.Duration) time.Duration { return ds[rng.IntN(len(ds))] }
	o.SubmissionStabilization = pick(0, time.Second, 10*time.Second)
	o.ExecutingStabilization = pick(0, 20*time.Second, time.Minute)
	o.Cooldown = pick(0, 30*time.Second)
	o.ResourceWaitTimeout = pick(-1, 0, time.Minute, 5*time.Minute)
	o.ScalingIntervalMax = pick(0, 2*time.Minute)
	o.SlotIdleTimeout = pick(0, 30*time.Second)
	o.HeartbeatTimeout = pick(0, 50*time.Second)
	o.MinParallelismIncrease = 1 + rng.IntN(3)
	o.RescaleOnCheckpoint = rng.IntN(3) == 0
	o.MaxTriggerDelay = pick(0, time.Minute)
	o.PreferMinimalTaskManagers = rng.IntN(2) == 0
	o.BlocklistDefaultTimeout = pick(0, 10*time.Minute)
	switch rng.IntN(4) {
	case 0:
		o.Restart = restart.Config{Type: restart.TypeNone}
	case 1:
		o.Restart = restart.Config{Type: restart.TypeFixedDelay, Attempts: 1 + rng.IntN(5), Delay: pick(0, time.Second, 10*time.Second)}
	case 2:
		o.Restart = restart.DefaultConfig()
	default:
		o.Restart = restart.Config{Type: restart.TypeFailureRate, MaxFailuresPerInterval: 1 + rng.IntN(3), FailureRateInterval: time.Minute, Delay: time.Second}
	}
	if rng.IntN(4) == 0 {
		o.ActiveWorkers = core.ActiveWorkers{Enabled: true, SlotsPerWorker: 1 + rng.IntN(3), MaxWorkers: rng.IntN(6)}
	}
	o.KeepTaskManagers = rng.IntN(3) == 0
	if rng.IntN(2) == 0 {
		o = core.ReactiveDefaults(o, func(string) bool { return false })
	}
	return o
}

func simulate(seed uint64, cov *coverage) error {
	rng := rand.New(rand.NewPCG(seed, 0x7469646573696d))
	g := randomGraph(rng)
	o := randomOptions(rng)
	wrng := rand.New(rand.NewPCG(seed, 0x7761726d7570))
	if wrng.IntN(2) == 0 {
		o.WarmupTimeout = time.Duration(1+wrng.IntN(60)) * time.Second
		o.MaxWarmupReplicas = 1 + wrng.IntN(3)
	}
	o.NumStandbyReplicas = wrng.IntN(3)
	env, err := coretest.NewEnv(core.Config{Graph: g, Options: o, Seed: int64(seed)})
	if err != nil {
		return fmt.Errorf("new: %w", err)
	}
	s := &sim{rng: rng, env: env, reactive: o.Reactive, vertices: g.Vertices, cancelled: map[core.AttemptID]bool{},
		expected: map[core.TaskManagerID]bool{}, wrng: wrng, rounds: map[int]core.WarmUp{},
		reported: map[int]map[core.WarmupTask]bool{}}
	s.version = env.S.Version()
	env.Observe = s.check
	env.Step(core.Start{})
	for i, n := 0, 20+rng.IntN(40); i < n && s.err == nil; i++ {
		s.randomEvent()
		s.randomWarmupReport()
	}
	if s.err != nil {
		return s.err
	}
	err = s.cancelToEnd()
	for _, tr := range env.Transitions {
		cov.states[tr]++
	}
	cov.deploys += len(env.Deploys)
	cov.inflightDeploys += s.inflightDeploys
	cov.warmupSwitches += s.switches
	for _, r := range env.S.RescaleHistory() {
		switch r.Trigger {
		case core.TriggerNewResourceAvailable, core.TriggerUpdateRequirement:
			cov.rescales++
		case core.TriggerBlocklistEvacuation:
			cov.evacuations++
		}
	}
	return err
}

func (s *sim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("step %d (state %s): %s", s.steps, s.env.S.StateName(), fmt.Sprintf(format, args...))
	}
}

func (s *sim) randomEvent() {
	e, rng := s.env, s.rng
	tm := core.TaskManagerID(fmt.Sprintf("tm%d", rng.IntN(8)))
	node := fmt.Sprintf("n%d", rng.IntN(4))
	switch k := rng.IntN(100); {
	case k < 20:
		if _, ok := e.TMs[tm]; !ok {
			e.Step(core.TaskManagerRegistered{TaskManager: tm, Node: core.NodeID(node), Slots: 1 + rng.IntN(4)})
		}
	case k < 26:
		e.Step(core.TaskManagerLost{TaskManager: tm, Reason: "killed"})
	case k < 30:
		e.Step(core.TaskManagerHeartbeat{TaskManager: tm})
	case k < 45:
		s.reportSome(core.TaskRunning)
	case k < 50:
		s.reportSome(core.TaskFailed)
	case k < 60:
		for _, a := range e.Attempts() {
			if s.cancelled[a] {
				e.Report(a, core.TaskCanceled)
			}
		}
	case k < 61:
		e.Report(e.S.Attempt(), core.TaskFinished)
	case k < 75:
		e.Advance(time.Duration(rng.IntN(90)) * time.Second)
	case k < 79:
		action := blocklist.MarkBlocked
		if rng.IntN(2) == 0 {
			action = blocklist.MarkBlockedAndEvacuate
		}
		var end time.Time
		if rng.IntN(2) == 0 {
			end = e.Now.Add(time.Duration(1+rng.IntN(10)) * time.Minute)
		}
		e.Step(core.BlockNodes{Nodes: []blocklist.BlockedNode{{ID: node, Action: action, Start: e.Now, End: end, Cause: "sim"}}})
	case k < 81:
		e.Step(core.UnblockNodes{Nodes: []core.NodeID{core.NodeID(node)}})
	case k < 86:
		if rng.IntN(2) == 0 {
			e.Step(core.CheckpointCompleted{Attempt: e.S.Attempt(), Checkpoint: e.S.LatestCheckpoint() + 1})
		} else {
			e.Step(core.CheckpointFailed{Attempt: e.S.Attempt(), Checkpoint: e.S.LatestCheckpoint() + 1})
		}
	case k < 89:
		req := map[core.VertexID]core.Bounds{}
		for _, v := range s.vertices {
			lo := 1 + rng.IntN(3)
			req[core.VertexID(v.ID)] = core.Bounds{Lower: lo, Upper: lo + rng.IntN(4)}
		}
		e.Step(core.UpdateResourceRequirements{Requirements: req})
	case k < 91:
		o := e.S.Options()
		o.MinParallelismIncrease = 1 + rng.IntN(4)
		e.Step(core.UpdateOptions{Options: o})
	case k < 93:
		e.Step(core.GlobalFailure{Error: "sim", Unrecoverable: rng.IntN(5) == 0})
	case k < 94:
		if rng.IntN(2) == 0 {
			e.Step(core.WorkerRequestFailed{Reason: "quota"})
		} else {
			var ids []core.TaskManagerID
			for i := 0; i < 1+rng.IntN(3); i++ {
				ids = append(ids, core.TaskManagerID(fmt.Sprintf("tm%d", rng.IntN(8))))
			}
			e.Step(core.WorkersExpected{TaskManagers: ids})
		}
	default:
		// A stale timer: the oldest timer of an older version, fired out of order. Picked
		// by id, not by map order, so a seed replays the same run.
		var stale *coretest.Timer
		for _, t := range e.Timers {
			if t.Version < e.S.Version() && (stale == nil || t.ID < stale.ID) {
				stale = &t
			}
		}
		if stale != nil {
			delete(e.Timers, stale.ID)
			e.Step(core.TimerFired{Timer: stale.ID, Version: stale.Version})
		}
	}
}

func (s *sim) reportSome(state core.TaskState) {
	a := s.env.S.Attempt()
	running := s.env.Running(a)
	if len(running) == 0 {
		return
	}
	st := running[s.rng.IntN(len(running))]
	s.env.Step(core.TaskStateChanged{Attempt: a, Subtask: st, State: state, Error: "sim"})
}

// cancelToEnd cancels the job and plays the cluster until the job is terminal.
func (s *sim) cancelToEnd() error {
	e := s.env
	e.Step(core.CancelJob{})
	for i := 0; i < 10 && !e.S.Status().IsTerminal(); i++ {
		for _, a := range e.Attempts() {
			e.Report(a, core.TaskCanceled)
		}
		e.Advance(time.Hour)
	}
	if s.err != nil {
		return s.err
	}
	if !e.S.Status().IsTerminal() {
		return fmt.Errorf("after cancel the job is %s in %s, want a terminal status", e.S.Status(), e.S.StateName())
	}
	return nil
}

// check runs after every step.
func (s *sim) check(ev core.Event, effects []core.Effect) {
	s.steps++
	e := s.env
	prev := s.version
	s.version = e.S.Version()
	if tf, ok := ev.(core.TimerFired); ok && tf.Version != prev {
		if len(effects) != 0 || s.version != prev {
			s.fail("stale timer %d (version %d, current %d) acted: %d effects, version now %d", tf.Timer, tf.Version, prev, len(effects), s.version)
		}
	}
	blocked := map[core.NodeID]bool{}
	for _, n := range e.S.Blocklist() {
		blocked[core.NodeID(n.ID)] = true
	}
	tms := map[core.TaskManagerID]core.TaskManagerInfo{}
	total := 0
	for _, tm := range e.S.TaskManagers() {
		tms[tm.ID] = tm
		total += tm.Slots
	}
	req := e.S.Requirements()
	inFlightBefore := s.inFlight()
	s.track(ev, effects)
	for _, tr := range e.LastTransitions {
		if strings.HasSuffix(tr, "-> WaitingForResources") {
			s.waitStart = e.Now
		}
	}
	for _, eff := range effects {
		if _, ok := eff.(core.Deploy); ok && inFlightBefore > 0 && s.inFlight() > 0 {
			s.inflightDeploys++
			s.checkStabilized(total, blocked, tms)
		}
	}
	s.checkWarmups(ev, effects)
	keep := e.S.Options().KeepTaskManagers && !e.S.Status().IsTerminal()
	for _, eff := range effects {
		if c, ok := eff.(core.CancelAttempt); ok {
			s.cancelled[c.Attempt] = true
		}
		switch eff := eff.(type) {
		case core.ReleaseTaskManager:
			if keep && !strings.Contains(eff.Reason, "heartbeat") {
				s.fail("KeepTaskManagers: TaskManager %s released (%s)", eff.TaskManager, eff.Reason)
			}
		case core.RejectTaskManager:
			if keep {
				s.fail("KeepTaskManagers: TaskManager %s refused (%s)", eff.TaskManager, eff.Reason)
			}
		}
		d, ok := eff.(core.Deploy)
		if !ok {
			continue
		}
		if len(d.Slots) > total {
			s.fail("deploy %d uses %d slots, only %d registered", d.Attempt, len(d.Slots), total)
		}
		for _, v := range d.Vertices {
			b := req[v.Vertex]
			if v.Parallelism < b.Lower || v.Parallelism > b.Upper || v.Parallelism > v.MaxParallelism {
				s.fail("vertex %s at parallelism %d outside bounds [%d,%d] (max %d)", v.Vertex, v.Parallelism, b.Lower, b.Upper, v.MaxParallelism)
			}
		}
		seen := map[core.SlotID]bool{}
		for _, sa := range d.Slots {
			if seen[sa.Slot] {
				s.fail("slot %s used twice in deploy %d", sa.Slot, d.Attempt)
			}
			seen[sa.Slot] = true
			tm, ok := tms[sa.Slot.TaskManager]
			if !ok || sa.Slot.Index >= tm.Slots {
				s.fail("deploy %d uses slot %s of no registered TaskManager", d.Attempt, sa.Slot)
			}
			if blocked[tm.Node] {
				s.fail("deploy %d places subtasks on blocked node %s (slot %s)", d.Attempt, tm.Node, sa.Slot)
			}
			vs := map[core.VertexID]bool{}
			for _, st := range sa.Subtasks {
				if vs[st.Vertex] {
					s.fail("slot %s holds two subtasks of vertex %s", sa.Slot, st.Vertex)
				}
				vs[st.Vertex] = true
			}
		}
	}
	owner := map[core.SlotID]core.AttemptID{}
	for a, m := range e.Subtasks {
		for st, sub := range m {
			if other, ok := owner[sub.Slot]; ok && other != a {
				s.fail("slot %s runs %s of attempt %d and a subtask of attempt %d", sub.Slot, st, a, other)
			}
			owner[sub.Slot] = a
		}
	}
}

// inFlight is the sim's count of workers on their way (the larger of requested and
// expected: an active driver serves requests with the containers it adopted).
func (s *sim) inFlight() int { return max(s.pending, len(s.expected)) }

// track follows requests, registrations and expectations the way a cluster would see them.
func (s *sim) track(ev core.Event, effects []core.Effect) {
	rejected := false
	for _, eff := range effects {
		switch eff := eff.(type) {
		case core.RequestWorkers:
			s.pending += eff.Count
		case core.RejectTaskManager:
			rejected = true
		}
	}
	switch ev := ev.(type) {
	case core.TaskManagerRegistered:
		if !rejected {
			s.pending = max(0, s.pending-1)
			delete(s.expected, ev.TaskManager)
		}
	case core.TaskManagerLost:
		delete(s.expected, ev.TaskManager)
	case core.WorkerRequestFailed:
		s.pending = max(0, s.pending-1)
	case core.WorkersExpected:
		for _, tm := range ev.TaskManagers {
			if _, ok := s.env.TMs[tm]; !ok {
				s.expected[tm] = true
			}
		}
	}
	if s.env.S.Status().IsTerminal() {
		s.pending = 0
		clear(s.expected)
	}
}

// checkStabilized: a deployment while workers are on their way, without the desired
// slots, must come from WaitingForResources after the stabilization (or resource-wait)
// bound has passed.
func (s *sim) checkStabilized(total int, blocked map[core.NodeID]bool, tms map[core.TaskManagerID]core.TaskManagerInfo) {
	e := s.env
	usable := 0
	for _, tm := range tms {
		if !blocked[tm.Node] {
			usable += tm.Slots
		}
	}
	req := e.S.Requirements()
	groups := map[string]int{}
	for _, v := range s.vertices {
		groups[v.SlotSharingGroup] = max(groups[v.SlotSharingGroup], req[core.VertexID(v.ID)].Upper)
	}
	desired := 0
	for _, n := range groups {
		desired += n
	}
	if usable >= desired {
		return
	}
	o := e.S.Options()
	waited := e.Now.Sub(s.waitStart)
	fromWaiting := slices.Contains(e.LastTransitions, "WaitingForResources -> Executing")
	if fromWaiting && (waited >= o.SubmissionStabilization || (o.ResourceWaitTimeout >= 0 && waited >= o.ResourceWaitTimeout)) {
		return
	}
	s.fail("deployed with %d worker(s) on their way and %d of %d desired slots after waiting %v (stabilization %v, transitions %v)",
		s.inFlight(), usable, desired, waited, o.SubmissionStabilization, e.LastTransitions)
}

// randomWarmupReport has some TaskManager of a round report progress or an error.
func (s *sim) randomWarmupReport() {
	if len(s.rounds) == 0 || s.wrng.IntN(3) > 0 {
		return
	}
	ids := make([]int, 0, len(s.rounds))
	for id := range s.rounds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	w := s.rounds[ids[s.wrng.IntN(len(ids))]]
	if len(w.Tasks) == 0 {
		return
	}
	t := w.Tasks[s.wrng.IntN(len(w.Tasks))]
	ev := core.WarmupReported{Round: w.Round, TaskManager: t.TaskManager, Vertex: t.Vertex, KeyGroups: t.KeyGroups,
		Checkpoint: w.Checkpoint, Bytes: int64(s.wrng.IntN(1000))}
	if s.wrng.IntN(4) == 0 {
		ev.Error = "sim: fetch failed"
	}
	if s.reported[w.Round] == nil {
		s.reported[w.Round] = map[core.WarmupTask]bool{}
	}
	s.reported[w.Round][t] = true
	s.env.Step(ev)
}

// checkWarmups checks the warm-up and standby effects of one step.
func (s *sim) checkWarmups(ev core.Event, effects []core.Effect) {
	e := s.env
	// The state after the step: a round is planned on what the step left.
	blocked := map[core.NodeID]bool{}
	for _, n := range e.S.Blocklist() {
		blocked[core.NodeID(n.ID)] = true
	}
	tms := map[core.TaskManagerID]core.TaskManagerInfo{}
	for _, tm := range e.S.TaskManagers() {
		tms[tm.ID] = tm
	}
	if _, ok := ev.(core.WarmupReported); ok {
		for _, tr := range e.LastTransitions {
			if strings.HasSuffix(tr, "-> Failing") || strings.HasSuffix(tr, "-> Finished") {
				s.fail("a warm-up report made the transition %s", tr)
			}
		}
	}
	placed := e.S.KeyGroupPlacement()
	var lastStandby *core.WarmUp // planned against the placement the step ends with
	defer func() {
		if lastStandby == nil {
			return
		}
		for _, t := range lastStandby.Tasks {
			p := placed[t.Vertex]
			if t.Subtask < len(p.TaskManagers) && p.TaskManagers[t.Subtask] == string(t.TaskManager) {
				s.fail("standby copy of %s#%d[%s] on its owner %s", t.Vertex, t.Subtask, t.KeyGroups, t.TaskManager)
			}
		}
	}()
	for _, eff := range effects {
		switch eff := eff.(type) {
		case core.WarmUp:
			s.rounds[eff.Round] = eff
			if eff.Kind == core.WarmupPlanned {
				catching := 0
				for _, t := range eff.Tasks {
					if !s.reported[eff.Round][t] {
						catching++
					}
				}
				if catching > e.S.Options().MaxWarmupReplicas {
					s.fail("warm-up round %d has %d copies catching up (of %d), max.warmup.replicas is %d", eff.Round, catching, len(eff.Tasks), e.S.Options().MaxWarmupReplicas)
				}
			}
			for _, t := range eff.Tasks {
				info, ok := tms[t.TaskManager]
				if !ok || blocked[info.Node] || info.Blocked {
					s.fail("%s round %d copies %s#%d[%s] to %s: not registered or on a blocked node", eff.Kind, eff.Round, t.Vertex, t.Subtask, t.KeyGroups, t.TaskManager)
				}
			}
			if eff.Kind == core.WarmupStandby {
				lastStandby = &eff
			}
		case core.StopWarmup:
			if eff.Reason == "warm-ups caught up" || strings.HasPrefix(eff.Reason, "state.warmup.timeout") || eff.Reason == "every warm-up failed" {
				s.switches++
			}
			delete(s.rounds, eff.Round)
			delete(s.reported, eff.Round)
			if lastStandby != nil && lastStandby.Round == eff.Round {
				lastStandby = nil
			}
		}
	}
}
