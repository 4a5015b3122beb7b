package conf

import "time"

// Values that depend on more than one option, computed the way Flink's AdaptiveScheduler.Settings
// computes them. The scheduler reads these instead of the raw options.

// IsReactive reports whether reactive mode is on (execution-mode: reactive).
func IsReactive(c *Config) bool {
	return ExecutionMode.Get(c) == "reactive"
}

// EffectiveResourceWaitTimeout is the submission resource-wait timeout; reactive mode waits
// forever (-1) unless the user set the option.
func EffectiveResourceWaitTimeout(c *Config) time.Duration {
	if IsReactive(c) && !c.IsSet(SubmissionResourceWaitTimeout.Key()) {
		return -time.Millisecond
	}
	return SubmissionResourceWaitTimeout.Get(c)
}

// ReactiveSubmissionStabilizationTimeout is reactive mode's submission stabilization
// timeout (Flink's is 0): the window in which TaskManagers that start together are taken
// into one deployment (core.ReactiveSubmissionStabilization says why 1 s).
const ReactiveSubmissionStabilizationTimeout = time.Second

// EffectiveSubmissionStabilizationTimeout is the submission stabilization timeout; reactive mode
// uses ReactiveSubmissionStabilizationTimeout unless the user set the option.
func EffectiveSubmissionStabilizationTimeout(c *Config) time.Duration {
	if IsReactive(c) && !c.IsSet(SubmissionResourceStabilizationTimeout.Key()) {
		return ReactiveSubmissionStabilizationTimeout
	}
	return SubmissionResourceStabilizationTimeout.Get(c)
}

// EffectiveExecutingStabilizationTimeout is the executing resource stabilization timeout;
// reactive mode uses 0 unless the user set the option (see core.ReactiveDefaults for why).
func EffectiveExecutingStabilizationTimeout(c *Config) time.Duration {
	if IsReactive(c) && !c.IsSet(ExecutingResourceStabilizationTimeout.Key()) {
		return 0
	}
	return ExecutingResourceStabilizationTimeout.Get(c)
}

// EffectiveMaxTriggerDelay is rescale-trigger.max-delay if set; else 0 without checkpointing, else
// (max-checkpoint-failures + 1) × checkpoint interval.
func EffectiveMaxTriggerDelay(c *Config) time.Duration {
	if d, ok := RescaleTriggerMaxDelay.Lookup(c); ok {
		return d
	}
	interval, ok := CheckpointingInterval.Lookup(c)
	if !ok {
		return 0
	}
	return time.Duration(RescaleTriggerMaxCheckpointFailures.Get(c)+1) * interval
}

// EffectiveRestartStrategy is restart-strategy.type if set; else exponential-delay when
// checkpointing is enabled or the job runs in reactive mode, and none otherwise. Flink
// (≥ 1.19) leaves a reactive job without checkpointing on "none", so losing a TaskManager
// fails the job instead of scaling it down; tide scales it down.
func EffectiveRestartStrategy(c *Config) string {
	if s, ok := RestartStrategyType.Lookup(c); ok {
		return s
	}
	if _, ok := CheckpointingInterval.Lookup(c); ok || IsReactive(c) {
		return "exponential-delay"
	}
	return "none"
}
