package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidestream/tide/core/keygroups"
	"github.com/tidestream/tide/core/restart"
)

// ActiveWorkers configures drivers that start workers on demand (YARN, Kubernetes): the
// scheduler asks for ceil(missing slots / SlotsPerWorker) workers, never more than
// MaxWorkers in total (0: no limit). Standalone leaves it disabled.
type ActiveWorkers struct {
	Enabled        bool
	SlotsPerWorker int
	MaxWorkers     int
}

// Options are the scheduler settings, as typed values (conf/ parses the Flink keys; the
// 2.x key names win over the 1.x ones there). Zero durations mean "none" except where
// noted.
type Options struct {
	// Reactive is execution-mode: reactive (also scheduler-mode: reactive): every vertex's
	// upper bound is its maxParallelism and the job uses every slot offered.
	Reactive bool
	// ResourceWaitTimeout (submission.resource-wait-timeout): how long WaitingForResources
	// waits for sufficient resources before failing the job; negative waits forever.
	ResourceWaitTimeout time.Duration
	// SubmissionStabilization (submission.resource-stabilization-timeout): how long
	// WaitingForResources waits once resources are sufficient but not desired. It is also
	// how long the job waits for a lost TaskManager to come back before running on what
	// is left (see ReactiveDefaults).
	SubmissionStabilization time.Duration
	// ExecutingStabilization (executing.resource-stabilization-timeout): in Executing, how
	// long after the first change with sufficient (not desired) resources to rescale.
	ExecutingStabilization time.Duration
	// Cooldown (executing.cooldown-after-rescaling, 1.x scaling-interval.min): no rescale
	// within this time of entering Executing.
	Cooldown time.Duration
	// ScalingIntervalMax (scaling-interval.max): a parallelism change that does not meet
	// MinParallelismIncrease is applied anyway once it has been pending this long; 0: never.
	ScalingIntervalMax time.Duration
	// MaxTriggerDelay (rescale-trigger.max-delay): with RescaleOnCheckpoint, the longest a
	// change waits for a completed checkpoint; 0: wait for checkpoint events only.
	MaxTriggerDelay time.Duration
	// SlotIdleTimeout (slot.idle.timeout): TaskManagers with no subtask this long are
	// released when the job does not need their slots; 0 disables the release.
	SlotIdleTimeout time.Duration
	// HeartbeatInterval and HeartbeatTimeout (heartbeat.*): a TaskManager silent for the
	// timeout is lost; it is only the fallback, dropped connections are reported at once.
	HeartbeatInterval time.Duration
	HeartbeatTimeout  time.Duration
	// MinParallelismIncrease (min-parallelism-increase): the smallest total increase of
	// parallelism that is worth a scale-up restart (reaching the desired parallelism and
	// any decrease always are).
	MinParallelismIncrease int
	// MaxCheckpointFailures (rescale-trigger.max-checkpoint-failures): consecutive failed
	// checkpoints that trigger a pending rescale anyway.
	MaxCheckpointFailures int
	// RescaleHistorySize: rescales kept for the REST API.
	RescaleHistorySize int
	// ExceptionHistorySize (web.exception-history-size).
	ExceptionHistorySize int
	// RescaleOnCheckpoint: in Executing, a pending rescale waits for the next completed
	// checkpoint (or MaxTriggerDelay / MaxCheckpointFailures) instead of happening at once.
	RescaleOnCheckpoint bool
	// PreferMinimalTaskManagers packs subtasks onto the fewest TaskManagers so idle ones
	// can be released after a downscale.
	PreferMinimalTaskManagers bool
	// KeyGroupBalanceFactor (state.key-groups.balance-factor, KIP-441's balance factor):
	// key groups stick to their TaskManager across rescales as long as no subtask owns more
	// than this many times the mean (maxParallelism/parallelism) nor fewer than the mean
	// divided by it; 1 is Flink's equal split. 0 means keygroups.DefaultBalanceFactor.
	KeyGroupBalanceFactor float64
	// MaxWarmupReplicas (max.warmup.replicas, Kafka Streams' key and default 2): per job,
	// the most key-group ranges warmed up at once before a planned move; the ranges beyond
	// it move without a warm-up (restored from the checkpoint storage at the switch).
	MaxWarmupReplicas int
	// WarmupTimeout (state.warmup.timeout): a planned move (scale-up, `tide rescale`,
	// evacuation) first warms up the ranges that change TaskManager and switches when they
	// hold the newest completed checkpoint, or after this long without them. 0 (the
	// default) switches at once, as Flink does.
	WarmupTimeout time.Duration
	// NumStandbyReplicas (num.standby.replicas, default 0): warm copies of every key-group
	// range kept on other TaskManagers (other nodes first) for a TaskManager loss.
	NumStandbyReplicas int
	// Restart selects the restart backoff strategy.
	Restart restart.Config
	// BlocklistDefaultTimeout is the block duration given to blocked nodes that carry no
	// end; 0 keeps such nodes blocked until unblocked.
	BlocklistDefaultTimeout time.Duration
	ActiveWorkers           ActiveWorkers
	// KeepTaskManagers: the AM never ends a TaskManager process (standalone, where scripts
	// start TaskManagers and nothing would start them again). Idle slots are only marked
	// free; a TaskManager on a blocked node stays registered and unused (evacuation stops
	// its subtasks, not the process) and is used again when the block ends. Only a
	// TaskManager whose heartbeat timed out is still let go: it is gone already.
	KeepTaskManagers bool
	// AdoptTimeout (jobmanager.failover.task-adoption.timeout): after an AM failover, how
	// long the new AM waits for the TaskManagers to report the subtasks they kept running
	// before it gives up adopting them and restores from the latest checkpoint; 0 never
	// adopts (every AM failover restores).
	AdoptTimeout time.Duration
}

// ReactiveSubmissionStabilization is the submission stabilization timeout of reactive mode
// (conf's default mirrors it). See ReactiveDefaults for why it is 1 s.
const ReactiveSubmissionStabilization = time.Second

// DefaultOptions returns Flink 2.x's defaults for the adaptive scheduler (non-reactive).
func DefaultOptions() Options {
	return Options{
		ResourceWaitTimeout:       5 * time.Minute,
		SubmissionStabilization:   10 * time.Second,
		ExecutingStabilization:    time.Minute,
		Cooldown:                  30 * time.Second,
		SlotIdleTimeout:           50 * time.Second,
		HeartbeatInterval:         10 * time.Second,
		HeartbeatTimeout:          50 * time.Second,
		MinParallelismIncrease:    1,
		MaxCheckpointFailures:     2,
		RescaleHistorySize:        32,
		ExceptionHistorySize:      16,
		PreferMinimalTaskManagers: true,
		KeyGroupBalanceFactor:     keygroups.DefaultBalanceFactor,
		Restart:                   restart.DefaultConfig(),
		BlocklistDefaultTimeout:   time.Hour,
		MaxWarmupReplicas:         2,
	}
}

// ReactiveDefaults applies reactive mode's defaults to o for every key the user did not
// set (userSet reports, by Flink key name, what the configuration file or -D named):
// wait forever for resources, a submission stabilization of 1 s
// (ReactiveSubmissionStabilization), and an executing stabilization of 0.
//
// Submission stabilization 1 s: Flink's reactive default is 0, so a job deploys on the
// first TaskManager that registers and restarts for every one that follows (Flink's own
// "flapping" pain point); FLIP-159 proposed 10 s. tide uses the window to absorb a burst:
// TaskManagers started together (a script, one YARN allocation, kept containers
// re-registering after an AM failover) register within a few hundred milliseconds of each
// other even on a loaded machine, so 1 s takes them all into one deployment while costing a
// lone TaskManager at most 1 s. The window is a hard bound, not a fixed wait: the job
// deploys at once when its desired resources are there, or when the scheduler knows what
// is on its way (workers requested from an active driver, containers adopted after a
// failover, TaskManagers the local launcher started) and all of it has arrived. The same
// window is how long a redeployment after a lost or evacuated TaskManager waits for the
// replacement. A configured value is always honoured.
//
// Executing stabilization 0: a reactive job's desired resources are unbounded, so Flink
// 2.x treats every new TaskManager as "sufficient, not desired" and waits 60 s before
// using it. tide keeps Flink 1.x's reactive behaviour instead: a TaskManager that joins
// is used once the cooldown after the last rescale has passed (at the next completed
// checkpoint when checkpointing is on), and min-parallelism-increase decides whether
// the gain is worth a restart.
func ReactiveDefaults(o Options, userSet func(key string) bool) Options {
	o.Reactive = true
	if !userSet("jobmanager.adaptive-scheduler.submission.resource-wait-timeout") &&
		!userSet("jobmanager.adaptive-scheduler.resource-wait-timeout") {
		o.ResourceWaitTimeout = -1
	}
	if !userSet("jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout") &&
		!userSet("jobmanager.adaptive-scheduler.resource-stabilization-timeout") {
		o.SubmissionStabilization = ReactiveSubmissionStabilization
	}
	if !userSet("jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout") {
		o.ExecutingStabilization = 0
	}
	return o
}

// Validate reports every option out of range.
func (o Options) Validate() error {
	var errs []error
	nonNeg := func(name string, d time.Duration) {
		if d < 0 {
			errs = append(errs, fmt.Errorf("option %s: %v, want >= 0", name, d))
		}
	}
	nonNeg("SubmissionStabilization", o.SubmissionStabilization)
	nonNeg("ExecutingStabilization", o.ExecutingStabilization)
	nonNeg("Cooldown", o.Cooldown)
	nonNeg("ScalingIntervalMax", o.ScalingIntervalMax)
	nonNeg("MaxTriggerDelay", o.MaxTriggerDelay)
	nonNeg("SlotIdleTimeout", o.SlotIdleTimeout)
	nonNeg("HeartbeatInterval", o.HeartbeatInterval)
	nonNeg("HeartbeatTimeout", o.HeartbeatTimeout)
	nonNeg("BlocklistDefaultTimeout", o.BlocklistDefaultTimeout)
	nonNeg("WarmupTimeout", o.WarmupTimeout)
	if o.MaxWarmupReplicas < 0 || o.NumStandbyReplicas < 0 {
		errs = append(errs, fmt.Errorf("option MaxWarmupReplicas/NumStandbyReplicas: %d/%d, want >= 0", o.MaxWarmupReplicas, o.NumStandbyReplicas))
	}
	nonNeg("AdoptTimeout", o.AdoptTimeout)
	if o.MinParallelismIncrease < 1 {
		errs = append(errs, fmt.Errorf("option MinParallelismIncrease: %d, want >= 1", o.MinParallelismIncrease))
	}
	if o.MaxCheckpointFailures < 1 {
		errs = append(errs, fmt.Errorf("option MaxCheckpointFailures: %d, want >= 1", o.MaxCheckpointFailures))
	}
	if o.RescaleHistorySize < 0 || o.ExceptionHistorySize < 0 {
		errs = append(errs, fmt.Errorf("option RescaleHistorySize/ExceptionHistorySize: %d/%d, want >= 0", o.RescaleHistorySize, o.ExceptionHistorySize))
	}
	if o.KeyGroupBalanceFactor != 0 && !(o.KeyGroupBalanceFactor >= 1) {
		errs = append(errs, fmt.Errorf("option KeyGroupBalanceFactor: %g, want >= 1 (0: default %g)", o.KeyGroupBalanceFactor, keygroups.DefaultBalanceFactor))
	}
	if o.ActiveWorkers.Enabled && o.ActiveWorkers.SlotsPerWorker < 1 {
		errs = append(errs, fmt.Errorf("option ActiveWorkers.SlotsPerWorker: %d, want >= 1 when enabled", o.ActiveWorkers.SlotsPerWorker))
	}
	if o.ActiveWorkers.MaxWorkers < 0 {
		errs = append(errs, fmt.Errorf("option ActiveWorkers.MaxWorkers: %d, want >= 0", o.ActiveWorkers.MaxWorkers))
	}
	if err := o.Restart.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("option Restart: %w", err))
	}
	return errors.Join(errs...)
}
