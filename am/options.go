package am

import (
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/restart"
)

// SchedulerOptions maps the configuration onto the core scheduler's options, the way
// Flink's AdaptiveScheduler.Settings reads its keys.
func SchedulerOptions(c *conf.Config) core.Options {
	o := core.DefaultOptions()
	o.ResourceWaitTimeout = conf.EffectiveResourceWaitTimeout(c)
	o.SubmissionStabilization = conf.EffectiveSubmissionStabilizationTimeout(c)
	o.ExecutingStabilization = conf.EffectiveExecutingStabilizationTimeout(c)
	o.Cooldown = conf.ExecutingCooldownAfterRescaling.Get(c)
	o.ScalingIntervalMax = conf.ScalingIntervalMax.Get(c)
	o.MinParallelismIncrease = conf.MinParallelismIncrease.Get(c)
	o.MaxCheckpointFailures = conf.RescaleTriggerMaxCheckpointFailures.Get(c)
	_, checkpointing := conf.CheckpointingInterval.Lookup(c)
	// Flink 2.x rescales at a completed checkpoint when checkpointing is on (bounded by
	// rescale-trigger.max-delay), so little work is replayed after the restart.
	o.RescaleOnCheckpoint = checkpointing
	o.MaxTriggerDelay = conf.EffectiveMaxTriggerDelay(c)
	o.SlotIdleTimeout = conf.SlotIdleTimeout.Get(c)
	o.HeartbeatInterval = conf.HeartbeatInterval.Get(c)
	o.HeartbeatTimeout = conf.HeartbeatTimeout.Get(c)
	o.PreferMinimalTaskManagers = conf.PreferMinimalTaskManagers.Get(c)
	o.RescaleHistorySize = conf.RescaleHistorySize.Get(c)
	o.KeyGroupBalanceFactor = conf.KeyGroupBalanceFactor.Get(c)
	o.WarmupTimeout = conf.WarmupTimeout.Get(c)
	o.MaxWarmupReplicas = conf.MaxWarmupReplicas.Get(c)
	o.NumStandbyReplicas = conf.NumStandbyReplicas.Get(c)
	o.BlocklistDefaultTimeout = conf.BlocklistDefaultTimeout.Get(c)
	o.Restart = RestartConfig(c)
	o.AdoptTimeout = conf.TaskAdoptionTimeout.Get(c)
	if conf.IsReactive(c) {
		o.Reactive = true
	}
	return o
}

// RestartConfig maps restart-strategy.* onto the core's restart configuration.
func RestartConfig(c *conf.Config) restart.Config {
	r := restart.DefaultConfig()
	r.Type = conf.EffectiveRestartStrategy(c)
	r.Attempts = conf.FixedDelayAttempts.Get(c)
	switch r.Type {
	case restart.TypeFailureRate:
		r.Delay = conf.FailureRateDelay.Get(c)
	default:
		r.Delay = conf.FixedDelayDelay.Get(c)
	}
	r.InitialBackoff = conf.ExponentialDelayInitialBackoff.Get(c)
	r.MaxBackoff = conf.ExponentialDelayMaxBackoff.Get(c)
	r.Multiplier = conf.ExponentialDelayBackoffMultiplier.Get(c)
	r.ResetThreshold = conf.ExponentialDelayResetBackoffThreshold.Get(c)
	r.Jitter = conf.ExponentialDelayJitterFactor.Get(c)
	r.AttemptsBeforeReset = conf.ExponentialDelayAttemptsBeforeResetBackoff.Get(c)
	r.MaxFailuresPerInterval = conf.FailureRateMaxFailuresPerInterval.Get(c)
	r.FailureRateInterval = conf.FailureRateInterval.Get(c)
	return r
}
