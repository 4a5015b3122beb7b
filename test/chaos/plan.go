package chaos

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Kind is what one action does to the cluster.
type Kind string

const (
	// Kill SIGKILLs a running TaskManager.
	Kill Kind = "kill"
	// Start starts one more TaskManager (local clusters only; YARN replaces containers itself).
	Start Kind = "start"
	// Pause freezes a TaskManager with SIGSTOP for Action.Pause, then SIGCONT.
	Pause Kind = "pause"
	// Evacuate blocks a TaskManager's node with MARK_BLOCKED_AND_EVACUATE_TASKS, through the
	// REST API or the CLI (Action.Via).
	Evacuate Kind = "evacuate"
	// KillMidCheckpoint freezes a TaskManager, waits for a checkpoint to be in progress
	// without it, and SIGKILLs it.
	KillMidCheckpoint Kind = "kill-mid-checkpoint"
	// KillAM SIGKILLs the AM (YARN only: the next attempt recovers the job).
	KillAM Kind = "kill-am"
	// Zombie freezes a TaskManager with SIGSTOP for longer than the heartbeat timeout
	// (Action.Pause), so the AM declares it lost while it lives, then SIGCONT: it comes
	// back to a job that has moved on without it.
	Zombie Kind = "zombie"
)

// Via is how an evacuation reaches the AM.
type Via string

const (
	ViaREST Via = "rest"
	ViaCLI  Via = "cli"
)

// Action is one step of a plan. Target names the TaskManager on a local cluster, whose
// ids the plan can know in advance ("tm-<n>", node "local-<n>"); on YARN, where the AM
// names TaskManagers and replaces them itself, Target is empty and Pick chooses among the
// TaskManagers running at that moment (sorted by id). Wait is the pause after the action.
type Action struct {
	Kind   Kind
	Target string
	Pick   uint32
	Pause  time.Duration
	Via    Via
	Wait   time.Duration
}

func (a Action) String() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	if a.Target != "" {
		b.WriteString(" " + a.Target)
	} else if a.Kind != Start && a.Kind != KillAM {
		fmt.Fprintf(&b, " pick=%d", a.Pick)
	}
	if a.Kind == Pause || a.Kind == Zombie {
		fmt.Fprintf(&b, " for %s", a.Pause)
	}
	if a.Kind == Evacuate {
		fmt.Fprintf(&b, " via %s", a.Via)
	}
	fmt.Fprintf(&b, ", then wait %s", a.Wait)
	return b.String()
}

// Spec bounds a plan.
type Spec struct {
	// Steps is how many actions the plan has.
	Steps int
	// Initial TaskManagers run before the first action (local: tm-1..tm-Initial).
	Initial int
	// Max TaskManagers the plan ever keeps running at once (local only).
	Max int
	// Local plans name targets and may start TaskManagers; otherwise (YARN) they pick at
	// run time, never start, and kill the AM once.
	Local bool
	// MinWait and MaxWait bound the pause after each action; MaxPause bounds a freeze.
	MinWait, MaxWait, MaxPause time.Duration
	// ZombiePause, when set, adds zombies (at least one per plan) frozen that long: it
	// must exceed the cluster's heartbeat timeout.
	ZombiePause time.Duration
}

// Plan is the schedule of seed under spec. Local plans keep at least one TaskManager
// running and unblocked and at most spec.Max; every plan holds at least one
// kill-mid-checkpoint, one evacuation and, with spec.ZombiePause, one zombie (the suite's
// required faults), placed by the seed.
func Plan(seed uint64, spec Spec) []Action {
	r := rand.New(rand.NewPCG(seed, 0x7469646563686173)) // "tidechas"
	m := &model{next: spec.Initial + 1}
	for i := 1; i <= spec.Initial; i++ {
		m.live = append(m.live, tmName(i))
	}
	// Fixed places for the required faults, then the KillAM on YARN.
	required := map[int]Kind{}
	place := func(k Kind) {
		for {
			i := r.IntN(spec.Steps)
			if _, taken := required[i]; !taken {
				required[i] = k
				return
			}
		}
	}
	place(KillMidCheckpoint)
	place(Evacuate)
	if !spec.Local {
		place(KillAM)
	}
	kinds := []Kind{Kill, Start, Pause, Pause, Evacuate, KillMidCheckpoint}
	if spec.ZombiePause > 0 {
		place(Zombie)
		kinds = append(kinds, Zombie)
	}
	plan := make([]Action, 0, spec.Steps)
	for i := 0; i < spec.Steps; i++ {
		k, ok := required[i]
		if !ok {
			k = kinds[r.IntN(len(kinds))]
			if !spec.Local && k == Start {
				k = Pause
			}
		}
		a := Action{Kind: k, Pick: r.Uint32()}
		a.Wait = spec.MinWait + time.Duration(r.Int64N(int64(spec.MaxWait-spec.MinWait)+1)).Round(10*time.Millisecond)
		if k == Pause {
			a.Pause = 100*time.Millisecond + time.Duration(r.Int64N(int64(spec.MaxPause))).Round(10*time.Millisecond)
		}
		if k == Zombie {
			a.Pause = spec.ZombiePause
		}
		if k == Evacuate {
			a.Via = []Via{ViaREST, ViaCLI}[r.IntN(2)]
		}
		if spec.Local {
			plan = append(plan, m.apply(a, spec.Max)...)
		} else {
			plan = append(plan, a)
		}
	}
	return plan
}

// model is the local cluster as the plan leaves it: the TaskManagers it started and has
// neither killed nor blocked, in start order.
type model struct {
	live []string
	next int
}

func tmName(n int) string { return "tm-" + strconv.Itoa(n) }

// NodeOf is the node id of a local TaskManager ("tm-3" runs on "local-3").
func NodeOf(tm string) string { return "local-" + strings.TrimPrefix(tm, "tm-") }

// apply names a's target and keeps the cluster within bounds: an action that would take
// the last TaskManager away is preceded by a start, a start beyond max becomes a pause.
func (m *model) apply(a Action, max int) []Action {
	var out []Action
	if a.Kind == Start && len(m.live) >= max {
		a.Kind = Pause
		a.Pause = 500 * time.Millisecond
	}
	// A zombie may leave or come back as the AM sees fit: the plan never counts on it again.
	removes := a.Kind == Kill || a.Kind == Evacuate || a.Kind == KillMidCheckpoint || a.Kind == Zombie
	if removes && len(m.live) < 2 {
		out = append(out, Action{Kind: Start, Target: tmName(m.next), Wait: a.Wait})
		m.live = append(m.live, tmName(m.next))
		m.next++
	}
	switch a.Kind {
	case Start:
		a.Target = tmName(m.next)
		m.live = append(m.live, a.Target)
		m.next++
	default:
		i := int(a.Pick % uint32(len(m.live)))
		a.Target = m.live[i]
		if removes {
			m.live = append(m.live[:i:i], m.live[i+1:]...)
		}
	}
	return append(out, a)
}

// FinalKill says how the suite kills a TaskManager during the sink's final commit: as
// soon as any file of the final output appears (Early: in-progress files, before the
// final checkpoint), or once the first part file is committed (Late: the commits of the
// other subtasks are under way).
type FinalKill string

const (
	FinalEarly FinalKill = "early"
	FinalLate  FinalKill = "late"
)

// Final is the seed's choice of final kill and of the index (among the TaskManagers
// running at that moment) of its victim.
func Final(seed uint64) (FinalKill, uint32) {
	r := rand.New(rand.NewPCG(seed, 0x66696e616c6b696c)) // "finalkil"
	return []FinalKill{FinalEarly, FinalLate}[r.IntN(2)], r.Uint32()
}
