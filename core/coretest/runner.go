package coretest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/core/restart"
)

// Runner executes scenario directives against an Env. Commands:
//
//	new-job [reactive] [type=BATCH] [option=value ...]   input: vertex and edge lines
//	start | cancel | suspend | global-failure [unrecoverable] | driver-error
//	add-tm id=(tm1,tm2) [node=n] [slots=N] | lose-tm id=tm1 [reason=..] | heartbeat id=tm1
//	tasks state=RUNNING [attempt=N]            report every running subtask of the attempt
//	fail-task subtask=v#i [attempt=N] [unrecoverable] [peer=tm]
//	                                           peer: failed on its broken connection to tm
//	tick d=10s                                 advance logical time, firing due timers
//	block node=n [evacuate] [for=10m] [cause=..] | unblock node=n
//	checkpoint id=N [failed] [attempt=N]
//	requirements v=(a:1:4,b:2:2)               FLIP-291 update (lower:upper; -1 default)
//	set option=value ...                       live options reload
//	stale-timers                               fire every timer armed before the current version
//	expect-tms id=(tm1,tm2)                    TaskManagers on their way (adopted, launched)
//	worker-failed [reason=..]                  an active driver could not start a worker
//	pending [message]                          the pending rescale and its reason [and its message]
//	warmup-report round=N checkpoint=N [tm=(tm1,..)] [bytes=N] [error=..]
//	                                           the round's copies (on those TaskManagers) report
//	report-tm id=tm1 tasks=(v#i:slot,...) ...  a TaskManager registers reporting subtasks (adoption.go)
//	state | metrics | history | exceptions | taskmanagers | blocklist-state | warmup-gauges
type Runner struct {
	Env *Env
	// warmups: the last WarmUp effect of every round, for warmup-report.
	warmups map[int]core.WarmUp
	// recoveredAttempt is new-job's recovered-attempt (report-tm's default attempt).
	recoveredAttempt core.AttemptID
}

// Handle runs one directive and returns its output.
func (r *Runner) Handle(t *testing.T, d *TestData) string {
	t.Helper()
	out, err := r.handle(d)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return out
}

func (r *Runner) handle(d *TestData) (string, error) {
	if d.Cmd == "new-job" {
		return r.newJob(d)
	}
	if r.Env == nil {
		return "", fmt.Errorf("%s before new-job", d.Cmd)
	}
	e := r.Env
	var out []string
	step := func(ev core.Event) {
		effs := e.Step(ev)
		out = append(out, r.effects(e.LastTransitions, effs)...)
	}

	switch d.Cmd {
	case "start":
		step(core.Start{})
	case "cancel":
		step(core.CancelJob{})
	case "suspend":
		step(core.SuspendJob{Reason: d.Arg("reason", "AM shutting down")})
	case "global-failure":
		step(core.GlobalFailure{Error: d.Arg("error", "coordinator failed"), Unrecoverable: d.HasArg("unrecoverable")})
	case "driver-error":
		step(core.DriverFatalError{Error: d.Arg("error", "driver gave up")})
	case "add-tm":
		slots, err := strconv.Atoi(d.Arg("slots", "1"))
		if err != nil {
			return "", fmt.Errorf("slots: %w", err)
		}
		for _, id := range d.Vals("id") {
			node := d.Arg("node", "node-"+id)
			step(core.TaskManagerRegistered{TaskManager: core.TaskManagerID(id), Node: core.NodeID(node), Slots: slots})
		}
	case "report-tm":
		ev, err := r.reportTM(d)
		if err != nil {
			return "", err
		}
		if d.Arg("attempt", "") == "" {
			for i := range ev.Tasks {
				ev.Tasks[i].Attempt = r.recoveredAttempt
			}
		}
		step(ev)
	case "lose-tm":
		for _, id := range d.Vals("id") {
			step(core.TaskManagerLost{TaskManager: core.TaskManagerID(id), Reason: d.Arg("reason", "connection lost")})
		}
	case "expect-tms":
		var ids []core.TaskManagerID
		for _, id := range d.Vals("id") {
			ids = append(ids, core.TaskManagerID(id))
		}
		step(core.WorkersExpected{TaskManagers: ids})
	case "worker-failed":
		step(core.WorkerRequestFailed{Reason: d.Arg("reason", "no container")})
	case "pending":
		p := e.S.PendingRescale()
		if d.HasArg("message") {
			return FormatPending(p) + p.Message + "\n", nil
		}
		return FormatPending(p), nil
	case "warmup-report":
		round, err1 := strconv.Atoi(d.Arg("round", ""))
		ckpt, err2 := strconv.Atoi(d.Arg("checkpoint", "0"))
		bytes, err3 := strconv.ParseInt(d.Arg("bytes", "0"), 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return "", fmt.Errorf("warmup-report: %w", err)
		}
		w, ok := r.warmups[round]
		if !ok {
			return "", fmt.Errorf("warmup-report: no WarmUp effect for round %d", round)
		}
		only := d.Vals("tm")
		for _, t := range w.Tasks {
			if len(only) > 0 && !slices.Contains(only, string(t.TaskManager)) {
				continue
			}
			step(core.WarmupReported{Round: round, TaskManager: t.TaskManager, Vertex: t.Vertex, KeyGroups: t.KeyGroups,
				Checkpoint: core.CheckpointID(ckpt), Bytes: bytes, Error: d.Arg("error", "")})
		}
	case "keygroups":
		placed := e.S.KeyGroupPlacement()
		var lines []string
		for _, v := range e.S.Order() {
			p := placed[v]
			var parts []string
			for i, r := range p.Ranges {
				parts = append(parts, fmt.Sprintf("#%d[%s]@%s", i, r, p.TaskManagers[i]))
			}
			lines = append(lines, fmt.Sprintf("%s %s", v, strings.Join(parts, " ")))
		}
		return strings.Join(lines, "\n") + "\n", nil
	case "warmup-gauges":
		return fmt.Sprintf("%+v\n", e.S.WarmupGauges()), nil
	case "heartbeat":
		for _, id := range d.Vals("id") {
			step(core.TaskManagerHeartbeat{TaskManager: core.TaskManagerID(id)})
		}
	case "tasks":
		attempt := r.attempt(d)
		state := core.TaskState(d.Arg("state", string(core.TaskRunning)))
		for _, st := range e.Running(attempt) {
			step(core.TaskStateChanged{Attempt: attempt, Subtask: st, State: state})
		}
	case "fail-task":
		st, err := parseSubtask(d.Arg("subtask", ""))
		if err != nil {
			return "", err
		}
		step(core.TaskStateChanged{Attempt: r.attempt(d), Subtask: st, State: core.TaskFailed,
			Error: d.Arg("error", "user code threw"), Unrecoverable: d.HasArg("unrecoverable"), LostPeer: core.TaskManagerID(d.Arg("peer", ""))})
	case "tick":
		dur, err := time.ParseDuration(d.Arg("d", "0s"))
		if err != nil {
			return "", fmt.Errorf("d: %w", err)
		}
		for _, f := range e.Advance(dur) {
			line := fmt.Sprintf("fire timer %d %s at=+%v", f.Timer.ID, f.Timer.Kind, f.Timer.At.Sub(Epoch))
			if f.Stale {
				line += " (stale, dropped)"
			}
			out = append(out, line)
			out = append(out, r.effects(f.Transitions, f.Effects)...)
		}
	case "stale-timers":
		var stale []Timer
		for _, t := range e.Timers {
			if t.Version < e.S.Version() {
				stale = append(stale, t)
			}
		}
		slices.SortFunc(stale, func(a, b Timer) int { return int(a.ID) - int(b.ID) })
		for _, t := range stale {
			delete(e.Timers, t.ID)
			effs := e.Step(core.TimerFired{Timer: t.ID, Version: t.Version})
			out = append(out, fmt.Sprintf("fire stale timer %d %s v=%d: %d effects", t.ID, t.Kind, t.Version, len(effs)))
			out = append(out, r.effects(e.LastTransitions, effs)...)
		}
	case "block":
		action := blocklist.MarkBlocked
		if d.HasArg("evacuate") {
			action = blocklist.MarkBlockedAndEvacuate
		}
		var end time.Time
		if f := d.Arg("for", ""); f != "" {
			dur, err := time.ParseDuration(f)
			if err != nil {
				return "", fmt.Errorf("for: %w", err)
			}
			end = e.Now.Add(dur)
		}
		var nodes []blocklist.BlockedNode
		for _, n := range d.Vals("node") {
			// Without for=, the block names no end and takes the default timeout, unless it
			// is marked permanent (endTimestamp Long.MAX_VALUE over REST).
			unset := end.IsZero() && !d.HasArg("permanent")
			nodes = append(nodes, blocklist.BlockedNode{ID: n, Action: action, Start: e.Now, End: end, EndUnset: unset, Cause: d.Arg("cause", "operator")})
		}
		step(core.BlockNodes{Nodes: nodes})
	case "unblock":
		var ids []core.NodeID
		for _, n := range d.Vals("node") {
			ids = append(ids, core.NodeID(n))
		}
		step(core.UnblockNodes{Nodes: ids})
	case "checkpoint":
		id, err := strconv.Atoi(d.Arg("id", "1"))
		if err != nil {
			return "", fmt.Errorf("id: %w", err)
		}
		if d.HasArg("failed") {
			step(core.CheckpointFailed{Attempt: r.attempt(d), Checkpoint: core.CheckpointID(id), Reason: "declined"})
		} else {
			step(core.CheckpointCompleted{Attempt: r.attempt(d), Checkpoint: core.CheckpointID(id)})
		}
	case "requirements":
		req := map[core.VertexID]core.Bounds{}
		for _, v := range d.Vals("v") {
			parts := strings.Split(v, ":")
			if len(parts) != 3 {
				return "", fmt.Errorf("requirement %q: want vertex:lower:upper", v)
			}
			lo, err1 := strconv.Atoi(parts[1])
			hi, err2 := strconv.Atoi(parts[2])
			if err1 != nil || err2 != nil {
				return "", fmt.Errorf("requirement %q: bounds must be integers", v)
			}
			req[core.VertexID(parts[0])] = core.Bounds{Lower: lo, Upper: hi}
		}
		before := len(e.Transitions)
		effs, err := e.S.UpdateRequirements(e.Now, req)
		if err != nil {
			return "refused: " + err.Error() + "\n", nil
		}
		e.apply(core.UpdateResourceRequirements{Requirements: req}, effs)
		out = append(out, r.effects(e.Transitions[before:], effs)...)
	case "set":
		o, err := applyOptions(e.S.Options(), d, false)
		if err != nil {
			return "", err
		}
		step(core.UpdateOptions{Options: o})
	case "state":
		return r.stateLine(), nil
	case "adoption":
		a := e.S.Adoption()
		skipped := ""
		if a.Skipped != "" {
			skipped = fmt.Sprintf(" skipped=%q", a.Skipped)
		}
		return fmt.Sprintf("pending=%v adopted=%v attempt=%d reported=%d/%d fallback=%q%s\n", a.Pending, a.Adopted, a.Attempt, a.Reported, a.Total, a.Fallback, skipped), nil
	case "metrics":
		m := e.S.Metrics()
		return fmt.Sprintf("%+v\n", m), nil
	case "history":
		var lines []string
		for _, h := range e.S.RescaleHistory() {
			lines = append(lines, FormatRescale(h))
		}
		return strings.Join(lines, "\n"), nil
	case "exceptions":
		var lines []string
		for _, x := range e.S.Exceptions() {
			lines = append(lines, fmt.Sprintf("+%v attempt=%d %s %s unrecoverable=%v", x.Time.Sub(Epoch), x.Attempt, x.Subtask, x.Error, x.Unrecoverable))
		}
		return strings.Join(lines, "\n"), nil
	case "taskmanagers":
		var lines []string
		for _, tm := range e.S.TaskManagers() {
			lines = append(lines, fmt.Sprintf("%s node=%s slots=%d free=%d blocked=%v", tm.ID, tm.Node, tm.Slots, tm.Free, tm.Blocked))
		}
		return strings.Join(lines, "\n"), nil
	case "blocklist-state":
		var lines []string
		for _, n := range e.S.Blocklist() {
			lines = append(lines, fmt.Sprintf("%s %s %s %q", n.ID, n.Action, formatEnd(n.End), n.Cause))
		}
		return strings.Join(lines, "\n"), nil
	default:
		return "", fmt.Errorf("unknown command %q", d.Cmd)
	}
	return r.flush(out), nil
}

func (r *Runner) attempt(d *TestData) core.AttemptID {
	if a := d.Arg("attempt", ""); a != "" {
		n, _ := strconv.Atoi(a)
		return core.AttemptID(n)
	}
	return r.Env.S.Attempt()
}

func (r *Runner) effects(transitions []string, effs []core.Effect) []string {
	var out []string
	for _, eff := range effs {
		if w, ok := eff.(core.WarmUp); ok {
			if r.warmups == nil {
				r.warmups = map[int]core.WarmUp{}
			}
			r.warmups[w.Round] = w
		}
	}
	if len(transitions) > 0 {
		out = append(out, "transition "+strings.Join(transitions, ", "))
	}
	for _, eff := range effs {
		out = append(out, FormatEffect(eff))
	}
	return out
}

func (r *Runner) flush(out []string) string {
	if len(out) == 0 {
		return "ok\n"
	}
	return strings.Join(out, "\n") + "\n"
}

func (r *Runner) stateLine() string {
	s := r.Env.S
	p := s.Parallelism()
	var parts []string
	for _, v := range sortedKeys(p) {
		parts = append(parts, fmt.Sprintf("%s=%d", v, p[v]))
	}
	m := s.Metrics()
	return fmt.Sprintf("%s %s attempt=%d parallelism=[%s] slots=%d free=%d tms=%d\n", s.StateName(), s.Status(), s.Attempt(),
		strings.Join(parts, " "), m.TotalSlots, m.FreeSlots, m.RegisteredTaskManagers)
}

func sortedKeys(m map[core.VertexID]int) []core.VertexID {
	keys := make([]core.VertexID, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func parseSubtask(s string) (core.SubtaskID, error) {
	v, i, ok := strings.Cut(s, "#")
	n, err := strconv.Atoi(i)
	if !ok || err != nil {
		return core.SubtaskID{}, fmt.Errorf("subtask %q: want vertex#index", s)
	}
	return core.SubtaskID{Vertex: core.VertexID(v), Index: n}, nil
}

// newJob parses the job graph from the input and the options from the arguments.
func (r *Runner) newJob(d *TestData) (string, error) {
	g := jobgraph.JobGraph{Name: d.Arg("name", "job"), Type: jobgraph.JobType(d.Arg("type", string(jobgraph.Streaming)))}
	for _, line := range strings.Split(d.Input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cmd, args, err := ParseLine(line)
		if err != nil {
			return "", err
		}
		ld := &TestData{Cmd: cmd, Args: args}
		if cmd == "edge" {
			if len(args) != 3 {
				return "", fmt.Errorf("edge line %q: want edge FROM TO KIND", line)
			}
			g.Edges = append(g.Edges, jobgraph.Edge{From: args[0].Key, To: args[1].Key, Kind: jobgraph.EdgeKind(strings.ToUpper(args[2].Key))})
			continue
		}
		v := jobgraph.Vertex{ID: cmd, Name: cmd, SlotSharingGroup: ld.Arg("group", "")}
		for key, dst := range map[string]*int{"p": &v.Parallelism, "lower": &v.LowerBound, "upper": &v.UpperBound, "max": &v.MaxParallelism} {
			if val := ld.Arg(key, ""); val != "" {
				n, err := strconv.Atoi(val)
				if err != nil {
					return "", fmt.Errorf("vertex %q: %s=%q: %w", cmd, key, val, err)
				}
				*dst = n
			}
		}
		g.Vertices = append(g.Vertices, v)
	}
	base := core.DefaultOptions()
	base.HeartbeatTimeout = 0 // scenarios that want heartbeats set hb-timeout
	base.SlotIdleTimeout = 0
	base.Restart = restart.Config{Type: restart.TypeFixedDelay, Attempts: 3, Delay: time.Second}
	o, err := applyOptions(base, d, true)
	if err != nil {
		return "", err
	}
	seed, _ := strconv.ParseInt(d.Arg("seed", "1"), 10, 64)
	recovered, err := recoveredFrom(d)
	if err != nil {
		return "", err
	}
	r.recoveredAttempt = 0
	if recovered != nil {
		r.recoveredAttempt = recovered.Attempt
	}
	env, err := NewEnv(core.Config{Graph: g, Options: o, Seed: seed, Recovered: recovered})
	if err != nil {
		return "", err
	}
	r.Env = env
	return r.stateLine(), nil
}

// applyOptions applies option arguments to o; withReactive applies reactive defaults to
// the keys the directive does not set.
func applyOptions(o core.Options, d *TestData, withReactive bool) (core.Options, error) {
	durations := map[string]*time.Duration{
		"wait": &o.ResourceWaitTimeout, "stab": &o.SubmissionStabilization, "exec-stab": &o.ExecutingStabilization,
		"cooldown": &o.Cooldown, "max-interval": &o.ScalingIntervalMax, "trigger-delay": &o.MaxTriggerDelay,
		"idle": &o.SlotIdleTimeout, "hb-interval": &o.HeartbeatInterval, "hb-timeout": &o.HeartbeatTimeout,
		"block-timeout": &o.BlocklistDefaultTimeout, "warmup": &o.WarmupTimeout, "adopt": &o.AdoptTimeout,
	}
	ints := map[string]*int{"min-increase": &o.MinParallelismIncrease, "ckpt-failures": &o.MaxCheckpointFailures,
		"history": &o.RescaleHistorySize, "max-warmups": &o.MaxWarmupReplicas, "standbys": &o.NumStandbyReplicas}
	for _, a := range d.Args {
		val := ""
		if len(a.Vals) > 0 {
			val = a.Vals[0]
		}
		switch {
		case durations[a.Key] != nil:
			dur, err := time.ParseDuration(val)
			if err != nil {
				return o, fmt.Errorf("option %s=%q: %w", a.Key, val, err)
			}
			*durations[a.Key] = dur
		case ints[a.Key] != nil:
			n, err := strconv.Atoi(val)
			if err != nil {
				return o, fmt.Errorf("option %s=%q: %w", a.Key, val, err)
			}
			*ints[a.Key] = n
		case a.Key == "rescale-on-checkpoint":
			o.RescaleOnCheckpoint = true
		case a.Key == "keep":
			o.KeepTaskManagers = true
		case a.Key == "spread":
			o.PreferMinimalTaskManagers = false
		case a.Key == "restart":
			rc, err := parseRestart(val)
			if err != nil {
				return o, err
			}
			o.Restart = rc
		case a.Key == "active":
			per, most, _ := strings.Cut(val, ":")
			o.ActiveWorkers.Enabled = true
			o.ActiveWorkers.SlotsPerWorker, _ = strconv.Atoi(per)
			o.ActiveWorkers.MaxWorkers, _ = strconv.Atoi(most)
		}
	}
	if withReactive && d.HasArg("reactive") {
		o = core.ReactiveDefaults(o, func(key string) bool {
			return (strings.HasSuffix(key, "resource-wait-timeout") && d.HasArg("wait")) ||
				(strings.HasSuffix(key, "resource-stabilization-timeout") && d.HasArg("stab"))
		})
	}
	return o, nil
}

// parseRestart reads none | fixed:ATTEMPTS:DELAY | exponential | rate:MAX:INTERVAL:DELAY.
func parseRestart(s string) (restart.Config, error) {
	c := restart.DefaultConfig()
	parts := strings.Split(s, ":")
	var err error
	switch parts[0] {
	case "none":
		c.Type = restart.TypeNone
	case "exponential":
		c.Type = restart.TypeExponentialDelay
	case "fixed":
		if len(parts) != 3 {
			return c, fmt.Errorf("restart %q: want fixed:ATTEMPTS:DELAY", s)
		}
		c.Type = restart.TypeFixedDelay
		if c.Attempts, err = strconv.Atoi(parts[1]); err == nil {
			c.Delay, err = time.ParseDuration(parts[2])
		}
	case "rate":
		if len(parts) != 4 {
			return c, fmt.Errorf("restart %q: want rate:MAX:INTERVAL:DELAY", s)
		}
		c.Type = restart.TypeFailureRate
		if c.MaxFailuresPerInterval, err = strconv.Atoi(parts[1]); err == nil {
			if c.FailureRateInterval, err = time.ParseDuration(parts[2]); err == nil {
				c.Delay, err = time.ParseDuration(parts[3])
			}
		}
	default:
		return c, fmt.Errorf("restart %q: unknown strategy", s)
	}
	if err != nil {
		return c, fmt.Errorf("restart %q: %w", s, err)
	}
	return c, nil
}
