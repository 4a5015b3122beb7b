package core

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tidestream/tide/core/allocator"
	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/core/keygroups"
	"github.com/tidestream/tide/core/restart"
	"github.com/tidestream/tide/core/slotpool"
)

// Config is what New needs.
type Config struct {
	Graph   jobgraph.JobGraph
	Options Options
	// Seed feeds every random choice (the restart strategy's jitter): same seed and
	// events, same effects.
	Seed   int64
	Logger *slog.Logger
	// LatestCheckpoint is the newest complete checkpoint found by a new AM attempt
	// (0: none); the first deployment restores from it.
	LatestCheckpoint CheckpointID
	// Requirements are resource requirements persisted by an earlier attempt (FLIP-291);
	// nil uses the job graph's bounds.
	Requirements map[VertexID]Bounds
	// Recovered is the deployment the previous AM attempt persisted as running (nil: none);
	// with Options.AdoptTimeout > 0 the first deployment tries to adopt it (see adoption.go).
	Recovered *RecoveredDeployment
}

// vertexInfo is one vertex with its current bounds.
type vertexInfo struct {
	id           VertexID
	group        string
	maxP         int
	lower, upper int
}

// Scheduler is tide's adaptive scheduler: a deterministic state machine. Step is its only
// input; it never reads the clock, starts goroutines or touches the outside world.
type Scheduler struct {
	opts     Options
	graph    jobgraph.JobGraph
	log      *slog.Logger
	seed     int64
	vertices []vertexInfo
	order    []VertexID

	pool    *slotpool.Pool
	blocked *blocklist.Tracker
	restart restart.Strategy

	state         state
	version       uint64
	transitioning bool
	enteredAt     time.Time
	statusCause   string
	timers        timerTable
	// timersDirty: TaskManagers, slots, the blocklist or the state changed since the global
	// timers were last armed (heartbeats and task reports leave it alone: an armed timer
	// re-evaluates when it fires, so ordinary events stay O(1)).
	timersDirty bool

	attempt          AttemptID
	dep              *deployment
	lastPlacement    map[string][]string
	lastPlacementMem []string                      // backing array of lastPlacement's slices
	lastKeyGroups    map[VertexID]keygroups.Placed // the last deployed key-group placement
	spare            deploymentMemory              // left by the last released attempt for the next
	latestCheckpoint CheckpointID
	warmupRounds     int           // warm-up rounds numbered so far (planned and standby)
	standby          *standbyRound // the standby copies of the running attempt (num.standby.replicas)

	adopt *adoption // nil: nothing to adopt
	// adoptSkipped says why a recovered deployment was not waited for ("" none).
	adoptSkipped string
	history      rescaleHistory
	exceptions   []ExceptionEntry
	// peerFailures are subtask failures of the current attempt on a broken connection to a
	// TaskManager that was still registered (peer_loss.go).
	peerFailures []peerFailure
	metrics      Metrics

	pendingWorkers int
	arrivals       arrivals
	registrations  int       // TaskManagers registered so far
	lastRegistered time.Time // when the latest TaskManager registered
	now            time.Time // the time of the event being stepped
	declared       *DeclareResources
	freeBuf        []allocator.TaskManager
	decideMem      allocator.Workspace // a plan's assignments live here until the next plan

	out           []Effect
	onTransition  func(from, to StateName) // tests observe transitions through it
	beforeReserve func()                   // tests make slots vanish through it
}

// ErrReactiveBatch: reactive mode runs streaming jobs only.
var ErrReactiveBatch = errors.New("reactive mode does not support batch jobs")

// New validates the job graph and options and returns a scheduler in Created.
func New(cfg Config) (*Scheduler, error) {
	if err := cfg.Graph.Validate(); err != nil {
		return nil, fmt.Errorf("job %q: %w", cfg.Graph.Name, err)
	}
	if cfg.Options.Reactive && cfg.Graph.Type == jobgraph.Batch {
		return nil, fmt.Errorf("job %q of type %s: %w (execution-mode: reactive needs a %s job)",
			cfg.Graph.Name, cfg.Graph.Type, ErrReactiveBatch, jobgraph.Streaming)
	}
	if err := cfg.Options.Validate(); err != nil {
		return nil, fmt.Errorf("job %q: %w", cfg.Graph.Name, err)
	}
	strategy, err := restart.New(cfg.Options.Restart, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", cfg.Graph.Name, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{
		opts:             cfg.Options,
		graph:            cfg.Graph,
		log:              log, // the caller's logger names the job
		seed:             cfg.Seed,
		blocked:          blocklist.NewTracker(),
		restart:          strategy,
		latestCheckpoint: cfg.LatestCheckpoint,
	}
	s.pool = slotpool.New(func(node string) bool { return s.blocked.IsBlocked(node) })
	s.pool.KeepBlocked = cfg.Options.KeepTaskManagers
	s.timers.clear()
	for _, v := range cfg.Graph.Vertices {
		lower, upper := v.Bounds(cfg.Options.Reactive)
		s.vertices = append(s.vertices, vertexInfo{id: VertexID(v.ID), group: v.Group(),
			maxP: v.EffectiveMaxParallelism(), lower: lower, upper: upper})
		s.order = append(s.order, VertexID(v.ID))
	}
	if cfg.Requirements != nil {
		if err := s.setRequirements(cfg.Requirements); err != nil {
			return nil, fmt.Errorf("job %q: persisted requirements: %w", cfg.Graph.Name, err)
		}
	}
	if cfg.Recovered != nil {
		s.recoverDeployment(cfg.Recovered)
	}
	s.state = &created{baseState{s}}
	return s, nil
}

// Step applies one event at now and returns the effects to carry out, in order.
func (s *Scheduler) Step(now time.Time, ev Event) []Effect {
	s.out = nil
	s.now = now
	switch ev.(type) {
	case TaskManagerHeartbeat, TaskStateChanged, CheckpointCompleted, CheckpointFailed, WarmupReported:
	default:
		s.timersDirty = true
	}
	switch ev := ev.(type) {
	case Start:
		s.state.onStart(now)
	case TaskManagerRegistered:
		s.onTaskManagerRegistered(now, ev)
	case TaskManagerHeartbeat:
		if err := s.pool.Heartbeat(now, string(ev.TaskManager)); err != nil {
			s.stale("heartbeat", "task_manager", ev.TaskManager, "err", err)
		}
	case TaskManagerLost:
		s.adoptionLost(ev.TaskManager, ev.Reason)
		if !s.pool.Has(string(ev.TaskManager)) {
			if s.arrived(ev.TaskManager) {
				s.log.Info("expected task manager terminated before registering", "task_manager", ev.TaskManager, "reason", ev.Reason)
				s.requestWorkers(now)
				s.state.onResourcesChanged(now, TriggerResourceLost)
				break
			}
			s.stale("task manager lost", "task_manager", ev.TaskManager)
			break
		}
		s.loseTaskManager(now, ev.TaskManager, ev.Reason, TriggerResourceLost)
	case TaskStateChanged:
		s.onTaskStateChanged(now, ev)
	case CheckpointCompleted:
		s.latestCheckpoint = max(s.latestCheckpoint, ev.Checkpoint)
		if s.dep == nil || ev.Attempt != s.dep.attempt {
			s.stale("checkpoint completed", "attempt", ev.Attempt, "checkpoint", ev.Checkpoint)
			break
		}
		s.state.onCheckpoint(now, true)
		if s.state.name() == StateExecuting {
			s.standbyCheckpoint()
		}
	case CheckpointFailed:
		if s.dep == nil || ev.Attempt != s.dep.attempt {
			s.stale("checkpoint failed", "attempt", ev.Attempt, "checkpoint", ev.Checkpoint)
			break
		}
		s.state.onCheckpoint(now, false)
	case TimerFired:
		s.onTimerFired(now, ev)
	case CancelJob:
		s.state.onCancel(now)
	case SuspendJob:
		s.state.onSuspend(now, ev.Reason)
	case GlobalFailure:
		s.addException(ExceptionEntry{Time: now, Attempt: s.attempt, Error: ev.Error, Unrecoverable: ev.Unrecoverable})
		s.state.onGlobalFailure(now, ev.Error, ev.Unrecoverable)
	case WarmupReported:
		s.onWarmupReported(now, ev)
	case DriverFatalError:
		cause := "resource manager driver failed: " + ev.Error
		s.addException(ExceptionEntry{Time: now, Attempt: s.attempt, Error: cause, Unrecoverable: true})
		s.state.onGlobalFailure(now, cause, true)
	case UpdateResourceRequirements:
		s.onUpdateRequirements(now, ev)
	case UpdateOptions:
		s.onUpdateOptions(now, ev.Options)
	case BlockNodes:
		s.blockNodes(now, ev.Nodes)
	case UnblockNodes:
		s.unblockNodes(now, ev.Nodes)
	case WorkerRequestFailed:
		s.pendingWorkers = max(0, s.pendingWorkers-1)
		s.log.Warn("worker request failed", "reason", ev.Reason, "pending_workers", s.pendingWorkers)
		// One fewer worker on its way: a deployment waiting for it need not wait any more.
		s.state.onResourcesChanged(now, TriggerResourceLost)
	case WorkersExpected:
		s.onWorkersExpected(now, ev)
	default:
		s.log.Error("unknown event ignored", "event", fmt.Sprintf("%T", ev))
	}
	if s.timersDirty {
		s.armGlobalTimers(now)
	}
	out := s.out
	s.out = nil
	return out
}

func (s *Scheduler) emit(e Effect) { s.out = append(s.out, e) }

// stale counts and logs an event that belongs to an older state or attempt.
func (s *Scheduler) stale(what string, args ...any) {
	s.metrics.StaleEventsDropped++
	s.log.Debug("stale "+what+" dropped", args...)
}

// requirements returns the allocator's view of the vertices.
func (s *Scheduler) requirements() []allocator.Vertex {
	out := make([]allocator.Vertex, len(s.vertices))
	for i, v := range s.vertices {
		out[i] = allocator.Vertex{ID: string(v.id), Group: v.group, Lower: v.lower, Upper: v.upper}
	}
	return out
}

// requiredSlots is the desired number of slots (reactive: every vertex at maxParallelism).
func (s *Scheduler) requiredSlots() int { return allocator.RequiredSlots(s.requirements()) }

// requiredForIdle is the number of slots idle release must keep; -1 keeps everything.
func (s *Scheduler) requiredForIdle() int {
	if s.opts.Reactive || s.opts.KeepTaskManagers {
		return -1
	}
	return s.requiredSlots()
}

// declareResources emits DeclareResources when the requirement changed, and asks an
// active driver for the workers still missing.
func (s *Scheduler) declareResources(now time.Time) {
	d := DeclareResources{Slots: s.requiredSlots(), Unbounded: s.opts.Reactive}
	if s.declared == nil || *s.declared != d {
		s.declared = &d
		s.emit(d)
	}
	s.requestWorkers(now)
}
