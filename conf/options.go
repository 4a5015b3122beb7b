package conf

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Every option tide reads is declared here, grouped by area, with Flink's names and defaults
// (tide's own where Flink has none or where tide differs, as noted). conf/flink-conf.yaml
// documents each of them; TestShippedFileDocumentsEveryOption keeps the two in step.

const (
	unlimited      = math.MaxInt32
	maxParallelism = 1 << 15
	anyPort        = 65535
)

// ---- Execution mode and scheduler -------------------------------------------------------------

var (
	// ExecutionMode set to "reactive" turns on reactive mode (FLIP-159): use every slot offered.
	ExecutionMode = declare[string](Spec{
		Key:         "execution-mode",
		Fallback:    []string{"scheduler-mode"},
		Description: "Set to reactive to run the job with every slot the cluster offers and rescale when TaskManagers join or leave (FLIP-159). Flink 1.13+ spells it scheduler-mode; both are accepted.",
	}, enumType{values: []string{"reactive"}})

	// Scheduler selects the job scheduler; tide implements the adaptive scheduler only.
	Scheduler = declare[string](Spec{
		Key:         "jobmanager.scheduler",
		Default:     "Adaptive",
		Description: "Scheduler for the job. tide implements the adaptive scheduler (FLIP-160); Default and AdaptiveBatch are accepted for compatibility and rejected when the job is submitted. Flink's default is Default.",
	}, enumType{values: []string{"Default", "Adaptive", "AdaptiveBatch"}})

	// ParallelismDefault is the parallelism of operators that do not set their own.
	ParallelismDefault = declare[int](Spec{
		Key: "parallelism.default", Default: "1", Unit: "subtasks",
		Description: "Parallelism of operators that do not set one; ignored in reactive mode.",
	}, intType{1, maxParallelism})

	// PipelineMaxParallelism is the job-wide max parallelism (number of key groups); -1 derives it.
	PipelineMaxParallelism = declare[int](Spec{
		Key: "pipeline.max-parallelism", Default: "-1", Unit: "key groups",
		Description: "Upper bound of the parallelism and number of key groups; -1 derives min(max(roundUpPow2(p + p/2), 128), 32768).",
	}, maxParallelismType{})
)

var (
	// PipelineOperatorChaining chains forward operators of equal parallelism into one subtask.
	PipelineOperatorChaining = declare[bool](Spec{
		Key: "pipeline.operator-chaining", Default: "true",
		Description: "Run an operator in its input's subtask when the edge between them is forward at equal parallelism and the input feeds nothing else (no channel, no serialization between them). false: every operator is its own vertex, with a channel to the next. The AM ships it to its TaskManagers.",
	}, boolType{})
)

// ---- Adaptive scheduler -----------------------------------------------------------------------

const asPrefix = "jobmanager.adaptive-scheduler."

var (
	// SubmissionResourceWaitTimeout is how long to wait for the desired resources before starting with what is there.
	SubmissionResourceWaitTimeout = declare[time.Duration](Spec{
		Key: asPrefix + "submission.resource-wait-timeout", Default: "5 min",
		Deprecated:  []string{asPrefix + "resource-wait-timeout"},
		Description: "Longest wait for the desired resources after submission or a restart before the job starts with what it has (and fails if that is too little). Negative waits forever; reactive mode defaults to -1.",
		Reloadable:  true,
	}, durationType{allowNegative: true})

	// SubmissionResourceStabilizationTimeout is how long sufficient-but-not-desired resources must be stable before starting.
	SubmissionResourceStabilizationTimeout = declare[time.Duration](Spec{
		Key: asPrefix + "submission.resource-stabilization-timeout", Default: "10 s",
		Deprecated:  []string{asPrefix + "resource-stabilization-timeout"},
		Description: "Before a deployment (at start and after a restart): the longest sufficient but not desired resources are given to grow before the job starts; it starts at once when the TaskManagers known to be on their way (requested, adopted, launched with it) have registered. Reactive mode defaults to 1 s (Flink: 0), so TaskManagers started together share one deployment.",
		Reloadable:  true,
	}, durationType{})

	// ExecutingCooldownAfterRescaling is the minimum time between two rescales.
	ExecutingCooldownAfterRescaling = declare[time.Duration](Spec{
		Key: asPrefix + "executing.cooldown-after-rescaling", Default: "30 s",
		Deprecated:  []string{asPrefix + "scaling-interval.min"},
		Description: "Minimum time between two rescales, measured from entering Executing. Workers that a deployment had to go without (requested or adopted, still on their way when it could wait no longer) end it early when they register.",
		Reloadable:  true,
	}, durationType{})

	// ExecutingResourceStabilizationTimeout is how long sufficient-only resources wait before a rescale.
	ExecutingResourceStabilizationTimeout = declare[time.Duration](Spec{
		Key: asPrefix + "executing.resource-stabilization-timeout", Default: "60 s",
		Description: "While running: after the first change to sufficient (not desired) resources, wait this long before rescaling to them. Desired resources rescale at the next trigger. Reactive mode: 0 unless set (a TaskManager that joins is used once the cooldown has passed; Flink 2.x waits 60 s).",
		Reloadable:  true,
	}, durationType{})

	// ScalingIntervalMax forces a rescale after this interval even below min-parallelism-increase.
	ScalingIntervalMax = declare[time.Duration](Spec{
		Key:         asPrefix + "scaling-interval.max",
		Description: "If set, a pending parallelism change that does not reach min-parallelism-increase is applied anyway after this long (Flink 1.19 behaviour, kept by tide). Unset: never forced.",
		Reloadable:  true,
	}, durationType{})

	// MinParallelismIncrease is the minimum cumulative parallelism gain that justifies a scale-up.
	MinParallelismIncrease = declare[int](Spec{
		Key: asPrefix + "min-parallelism-increase", Default: "1", Unit: "subtasks",
		Description: "Minimum increase of the job's cumulative parallelism that triggers a scale-up. Flink 2.0 ignores it; tide honours it.",
		Reloadable:  true,
	}, intType{1, unlimited})

	// RescaleTriggerMaxCheckpointFailures is how many failed checkpoints after a change trigger a rescale anyway.
	RescaleTriggerMaxCheckpointFailures = declare[int](Spec{
		Key: asPrefix + "rescale-trigger.max-checkpoint-failures", Default: "2", Unit: "checkpoints",
		Deprecated:  []string{asPrefix + "scale-on-failed-checkpoints-count"},
		Description: "Consecutive failed checkpoints after a resource change that trigger the rescale anyway.",
		Reloadable:  true,
	}, intType{1, unlimited})

	// RescaleTriggerMaxDelay is the longest a change waits for a completed checkpoint before it is evaluated anyway.
	RescaleTriggerMaxDelay = declare[time.Duration](Spec{
		Key:         asPrefix + "rescale-trigger.max-delay",
		Deprecated:  []string{asPrefix + "max-delay-for-scale-trigger"},
		Description: "Longest a resource change waits for a completed checkpoint before it is evaluated anyway. Unset: 0 without checkpointing, else (max-checkpoint-failures + 1) x checkpoint interval.",
		Reloadable:  true,
	}, durationType{})

	// RescaleTriggerActiveCheckpoint triggers a checkpoint as soon as a rescale is pending.
	RescaleTriggerActiveCheckpoint = declare[bool](Spec{
		Key: asPrefix + "rescale-trigger.active-checkpoint.enabled", Default: "false",
		Description: "Trigger a checkpoint as soon as resources are stable and the parallelism would change, instead of waiting for the next periodic one (respects execution.checkpointing.min-pause).",
		Reloadable:  true,
	}, boolType{})

	// PreferMinimalTaskManagers packs slots onto as few TaskManagers as possible.
	PreferMinimalTaskManagers = declare[bool](Spec{
		Key: asPrefix + "prefer-minimal-taskmanagers", Default: "true",
		Description: "When scaling down, pack subtasks onto as few TaskManagers as possible so whole TaskManagers can be released.",
		Reloadable:  true,
	}, boolType{})

	// KeyGroupBalanceFactor is KIP-441's balance factor for key-group placement.
	KeyGroupBalanceFactor = declare[float64](Spec{
		Key: "state.key-groups.balance-factor", Default: "2",
		Description: "On a rescale, key groups stay on the TaskManager holding their state as long as no subtask owns more than this many times the mean number of key groups of its vertex (maxParallelism/parallelism) nor fewer than the mean divided by it; 1 is Flink's equal split. Applies from the next deployment.",
	}, floatType{1, math.Inf(1)})

	// RescaleHistorySize is how many rescales the REST API remembers; 0 turns the history off.
	RescaleHistorySize = declare[int](Spec{
		Key: "web.adaptive-scheduler.rescale-history.size", Default: "64", Unit: "rescales",
		Description: "Rescales kept for GET /jobs/:jobid/rescales/*; 0 disables the history. Flink's default is 0; tide keeps one by default.",
	}, intType{0, unlimited})
)

// ---- AM failover ---------------------------------------------------------------------------------

var (
	// TaskAdoptionTimeout bounds how long a new AM waits for the subtasks kept running.
	TaskAdoptionTimeout = declare[time.Duration](Spec{
		Key: "jobmanager.failover.task-adoption.timeout", Default: "15 s",
		Description: "After an AM failover the TaskManagers keep running the job's subtasks and report them to the new AM, which adopts them (no task restarts) when every subtask of the deployment the previous AM ran is reported; it waits at most this long, then restores every subtask from the latest checkpoint instead. 0 never adopts.",
	}, durationType{})
)

// ---- Slots and heartbeats ----------------------------------------------------------------------

var (
	// SlotIdleTimeout is how long an idle slot is kept before it is released.
	SlotIdleTimeout = declare[time.Duration](Spec{
		Key: "slot.idle.timeout", Default: "50 s",
		Description: "Idle slots (for example after a scale-down) are released after this long, with the TaskManager they belong to once it is idle, where the AM can start TaskManagers (YARN). Standalone TaskManagers are never ended by the AM: their idle slots are only marked free.",
		Reloadable:  true,
	}, durationType{})

	// SlotRequestMaxInterval batches resource declarations.
	SlotRequestMaxInterval = declare[time.Duration](Spec{
		Key: "slot.request.max-interval", Default: "20 ms",
		Description: "Resource declarations to the cluster are batched over this interval.",
		Reloadable:  true,
	}, durationType{})

	// HeartbeatInterval is how often the AM and TaskManagers exchange heartbeats.
	HeartbeatInterval = declare[time.Duration](Spec{
		Key: "heartbeat.interval", Default: "10 s",
		Description: "Interval between heartbeats between the AM and its TaskManagers.",
	}, durationType{min: time.Millisecond})

	// HeartbeatTimeout is how long without a heartbeat before a TaskManager is considered lost.
	HeartbeatTimeout = declare[time.Duration](Spec{
		Key: "heartbeat.timeout", Default: "50 s",
		Description: "A TaskManager that has not answered for this long is considered lost and its slots are released. Must be ≥ heartbeat.interval.",
	}, durationType{min: time.Millisecond})
)

// ---- Restart strategy --------------------------------------------------------------------------

const rsPrefix = "restart-strategy."

var (
	// RestartStrategyType selects the restart strategy.
	RestartStrategyType = declare[string](Spec{
		Key:         rsPrefix + "type",
		Description: "none, fixed-delay, exponential-delay or failure-rate. Unset: exponential-delay when checkpointing is enabled or in reactive mode (which needs a restart strategy to scale down), else none.",
		Reloadable:  true,
	}, enumType{
		values: []string{"none", "fixed-delay", "exponential-delay", "failure-rate"},
		aliases: map[string]string{
			"off": "none", "disable": "none", "norestart": "none", "no-restart": "none",
			"fixeddelay": "fixed-delay", "exponentialdelay": "exponential-delay", "failurerate": "failure-rate",
		},
	})

	// FixedDelayAttempts is the number of restarts before the job fails.
	FixedDelayAttempts = declare[int](Spec{
		Key: rsPrefix + "fixed-delay.attempts", Default: "1", Unit: "restarts",
		Description: "fixed-delay: restarts before the job is declared failed.",
		Reloadable:  true,
	}, intType{0, unlimited})

	// FixedDelayDelay is the pause before each restart.
	FixedDelayDelay = declare[time.Duration](Spec{
		Key: rsPrefix + "fixed-delay.delay", Default: "1 s",
		Description: "fixed-delay: pause between a failure and the restart.",
		Reloadable:  true,
	}, durationType{})

	// ExponentialDelayInitialBackoff is the first backoff.
	ExponentialDelayInitialBackoff = declare[time.Duration](Spec{
		Key: rsPrefix + "exponential-delay.initial-backoff", Default: "1 s",
		Description: "exponential-delay: backoff before the first restart.",
		Reloadable:  true,
	}, durationType{})

	// ExponentialDelayMaxBackoff caps the backoff.
	ExponentialDelayMaxBackoff = declare[time.Duration](Spec{
		Key: rsPrefix + "exponential-delay.max-backoff", Default: "1 min",
		Description: "exponential-delay: the backoff never grows beyond this. Must be ≥ initial-backoff.",
		Reloadable:  true,
	}, durationType{})

	// ExponentialDelayBackoffMultiplier multiplies the backoff after each failure.
	ExponentialDelayBackoffMultiplier = declare[float64](Spec{
		Key: rsPrefix + "exponential-delay.backoff-multiplier", Default: "1.5",
		Description: "exponential-delay: factor applied to the backoff after each failure.",
		Reloadable:  true,
	}, floatType{1, math.Inf(1)})

	// ExponentialDelayResetBackoffThreshold resets the backoff after this long without failure.
	ExponentialDelayResetBackoffThreshold = declare[time.Duration](Spec{
		Key: rsPrefix + "exponential-delay.reset-backoff-threshold", Default: "1 h",
		Description: "exponential-delay: after running this long without a failure the backoff returns to initial-backoff.",
		Reloadable:  true,
	}, durationType{})

	// ExponentialDelayJitterFactor randomizes the backoff by ± this fraction.
	ExponentialDelayJitterFactor = declare[float64](Spec{
		Key: rsPrefix + "exponential-delay.jitter-factor", Default: "0.1",
		Description: "exponential-delay: the backoff is randomized by ± this fraction of itself.",
		Reloadable:  true,
	}, floatType{0, 1})

	// ExponentialDelayAttemptsBeforeResetBackoff is the number of restarts allowed between resets.
	ExponentialDelayAttemptsBeforeResetBackoff = declare[int](Spec{
		Key: rsPrefix + "exponential-delay.attempts-before-reset-backoff", Default: "2147483647", Unit: "restarts",
		Description: "exponential-delay: restarts allowed before the backoff resets; exceeding it fails the job.",
		Reloadable:  true,
	}, intType{1, unlimited})

	// FailureRateMaxFailuresPerInterval is the number of failures tolerated per interval.
	FailureRateMaxFailuresPerInterval = declare[int](Spec{
		Key: rsPrefix + "failure-rate.max-failures-per-interval", Default: "1", Unit: "failures",
		Description: "failure-rate: failures tolerated within failure-rate-interval before the job fails.",
		Reloadable:  true,
	}, intType{1, unlimited})

	// FailureRateInterval is the window in which failures are counted.
	FailureRateInterval = declare[time.Duration](Spec{
		Key: rsPrefix + "failure-rate.failure-rate-interval", Default: "1 min",
		Description: "failure-rate: window over which failures are counted.",
		Reloadable:  true,
	}, durationType{min: time.Millisecond})

	// FailureRateDelay is the pause before each restart.
	FailureRateDelay = declare[time.Duration](Spec{
		Key: rsPrefix + "failure-rate.delay", Default: "1 s",
		Description: "failure-rate: pause between a failure and the restart.",
		Reloadable:  true,
	}, durationType{})
)

// ---- Checkpointing -----------------------------------------------------------------------------

var (
	// CheckpointingInterval turns on periodic checkpoints; unset means checkpointing is off.
	CheckpointingInterval = declare[time.Duration](Spec{
		Key:         "execution.checkpointing.interval",
		Description: "Interval between periodic checkpoints. Unset: checkpointing is off (and reactive mode loses state on every rescale).",
		Reloadable:  true,
	}, durationType{min: 10 * time.Millisecond})

	// CheckpointingTimeout aborts a checkpoint that takes longer.
	CheckpointingTimeout = declare[time.Duration](Spec{
		Key: "execution.checkpointing.timeout", Default: "10 min",
		Description: "A checkpoint that has not completed after this long is aborted.",
		Reloadable:  true,
	}, durationType{min: time.Millisecond})

	// CheckpointingMinPause is the minimum pause between the end of one checkpoint and the start of the next.
	CheckpointingMinPause = declare[time.Duration](Spec{
		Key: "execution.checkpointing.min-pause", Default: "0 ms",
		Description: "Minimum pause between the end of one checkpoint and the start of the next.",
		Reloadable:  true,
	}, durationType{})

	// CheckpointsDir is where checkpoints are written (hdfs://… or file://… or an absolute path).
	CheckpointsDir = declare[string](Spec{
		Key:         "state.checkpoints.dir",
		Description: "Checkpoint storage: hdfs://namenode:port/path, file:///path or an absolute local path. Layout: <dir>/<job-id>/chk-<n>/.",
	}, stringType{check: checkStorageURI, want: "an hdfs:// or file:// URI or an absolute path"})

	// CheckpointingTolerableFailedCheckpoints is how many consecutive checkpoint failures
	// the job tolerates before it fails over.
	CheckpointingTolerableFailedCheckpoints = declare[int](Spec{
		Key: "execution.checkpointing.tolerable-failed-checkpoints", Unit: "checkpoints",
		Description: "Consecutive checkpoint failures (declined by a TaskManager, storage write failed, timed out) tolerated before the job fails over and restores the latest checkpoint. Unset: no limit, the job keeps running through a storage outage (Flink fails over on the first failure).",
	}, intType{0, unlimited})

	// SavepointsDir is where savepoints go when the request names no directory.
	SavepointsDir = declare[string](Spec{
		Key:         "state.savepoints.dir",
		Description: "Default directory of savepoints (REST POST /jobs/:jobid/savepoints, tide savepoint) when the request names none: hdfs://, file:// or an absolute path.",
	}, stringType{check: checkStorageURI, want: "an hdfs:// or file:// URI or an absolute path"})

	// SavepointsAllowedDirs are more roots, besides state.savepoints.dir, that savepoint
	// targets may lie under.
	SavepointsAllowedDirs = declare[string](Spec{
		Key:         "state.savepoints.allowed-dirs",
		Description: "Directories, besides state.savepoints.dir, under which a savepoint request may name its target, separated by ';': hdfs://, file:// or absolute paths. A target outside all of them is refused (400).",
	}, stringType{check: checkStorageURIs, want: "hdfs:// or file:// URIs or absolute paths, separated by ';'"})

	// CheckpointsNumRetained is how many completed checkpoints are kept.
	CheckpointsNumRetained = declare[int](Spec{
		Key: "state.checkpoints.num-retained", Default: "1", Unit: "checkpoints",
		Description: "Completed checkpoints kept; older ones are deleted.",
		Reloadable:  true,
	}, intType{1, unlimited})

	// CheckpointsRetention says which of a job's checkpoints outlive it (Flink's key and values).
	CheckpointsRetention = declare[string](Spec{
		Key: "execution.checkpointing.externalized-checkpoint-retention", Default: "DELETE_ON_CANCELLATION",
		Description: "What becomes of the job's checkpoints (<state.checkpoints.dir>/<job-id>) when the job ends. DELETE_ON_CANCELLATION: deleted when it finishes or is cancelled, kept when it fails. RETAIN_ON_CANCELLATION: deleted when it finishes, kept when it is cancelled or fails. NO_EXTERNALIZED_CHECKPOINTS: deleted however it ends. A job suspended (its AM stopped, a new attempt may resume it) keeps them always; the AM logs where a kept checkpoint is.",
	}, enumType{values: []string{"DELETE_ON_CANCELLATION", "RETAIN_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS"}})

	// StateBackendType selects where keyed state lives on the TaskManagers.
	StateBackendType = declare[string](Spec{
		Key: "state.backend.type", Default: "hashmap",
		Description: "Keyed state backend: hashmap keeps state on the heap (small state, fastest); pebble keeps it in an embedded LSM on local disk (state larger than memory). rocksdb is accepted as an alias of pebble. Checkpoints have the same format with both (unless execution.checkpointing.incremental is on), so a job switches backend by restoring a savepoint.",
	}, enumType{values: []string{"hashmap", "pebble", "rocksdb"}})

	// StateBackendPebbleLocalDir is where the pebble backend keeps its files.
	StateBackendPebbleLocalDir = declare[string](Spec{
		Key:         "state.backend.pebble.localdir",
		Description: "Local directory of the pebble backend's instances (one per subtask, removed when it ends). Unset: the system temp directory. A TaskManager removes the instance directories there that no live process holds (left by a TaskManager killed with SIGKILL) when it starts and when it first uses the directory.",
	}, stringType{})

	// CheckpointingIncremental is Flink's execution.checkpointing.incremental (pebble backend).
	CheckpointingIncremental = declare[bool](Spec{
		Key: "execution.checkpointing.incremental", Default: "false",
		Description: "With state.backend.type pebble: a checkpoint uploads only the Pebble tables checkpoint storage does not hold yet, to <job>/shared/ beside the chk-<n>/ directories; the AM deletes a shared file when no retained checkpoint lists it. Savepoints then keep the pebble file format: switch backends through a savepoint of a job running without this key. Ignored by the hashmap backend.",
	}, boolType{})

	// LocalRecovery is Flink's state.backend.local-recovery.
	LocalRecovery = declare[bool](Spec{
		Key: "state.backend.local-recovery", Default: "false",
		Description: "Each TaskManager keeps its subtasks' files of the last completed checkpoint (taskmanager.state.local.root-dirs); a subtask restored on the same TaskManager reads them from there and downloads only what it lacks. Turned on by state.warmup.timeout or num.standby.replicas.",
	}, boolType{})

	// LocalStateRootDir is Flink's taskmanager.state.local.root-dirs (one directory here).
	LocalStateRootDir = declare[string](Spec{
		Key:         "taskmanager.state.local.root-dirs",
		Description: "Directory under which each TaskManager process keeps its local recovery files, in a directory of its own (tide-localstate-<TaskManager id>-<pid>-<random>, removed when it stops; those of TaskManagers killed meanwhile go when the next one starts there). Unset: state.backend.pebble.localdir (or the system temp directory).",
	}, stringType{})

	// StateBackendUploadNice is tide's own: how much lower the checkpoint uploaders' CPU
	// priority is than the TaskManager's (a nice increment; Linux only).
	StateBackendUploadNice = declare[int](Spec{
		Key: "state.backend.upload.nice", Default: "5", Unit: "nice steps",
		Description: "How much lower than the TaskManager's the CPU priority of the threads that write and upload checkpoint state (one per subtask, both backends) is, as a nice increment: 0 keeps them at the TaskManager's priority, 19 is the lowest (the result is capped at nice 19). When the CPUs are busy the kernel gives record processing the CPU first and the uploads what is left (nice 5 gets about a third of a nice-0 thread's share under contention, a whole idle CPU otherwise); a higher value makes checkpoints take longer on a loaded machine. Read when a TaskManager deploys the job's tasks. Linux only; ignored elsewhere.",
	}, intType{0, 19})
)

// ---- Blocklist (FLIP-224, tide's REST blocklist) -----------------------------------------------

var (
	// BlocklistEnabled turns the blocklist on.
	BlocklistEnabled = declare[bool](Spec{
		Key: "blocklist.enabled", Default: "true",
		Deprecated:  []string{"cluster.resource-blocklist.enabled"},
		Description: "Enables the node blocklist (REST /blocklist, CLI tide blocklist). Flink's FLIP-224 key cluster.resource-blocklist.enabled is accepted as an alias.",
	}, boolType{})

	// BlocklistDefaultTimeout is how long a node stays blocked when the request names no timeout.
	BlocklistDefaultTimeout = declare[time.Duration](Spec{
		Key: "blocklist.default-timeout", Default: "0 ms",
		Description: "How long a node stays blocked when the block request gives no end; 0 blocks it until it is unblocked (FLIP-224: no end means permanent). A request with endTimestamp 9223372036854775807 (Long.MAX_VALUE) is permanent whatever this says.",
		Reloadable:  true,
	}, durationType{})

	// BlocklistDefaultAction is the action of a block request that names none.
	BlocklistDefaultAction = declare[string](Spec{
		Key: "blocklist.default-action", Default: "MARK_BLOCKED",
		Description: "Action of a block request that names none: MARK_BLOCKED (no new slots on the node) or MARK_BLOCKED_AND_EVACUATE_TASKS (also move its running tasks away).",
		Reloadable:  true,
	}, enumType{values: []string{"MARK_BLOCKED", "MARK_BLOCKED_AND_EVACUATE_TASKS"}})

	// BlocklistCauseMaxLength bounds the cause of one block request.
	BlocklistCauseMaxLength = declare[int](Spec{
		Key: "blocklist.cause.max-length", Default: "1024", Unit: "bytes",
		Description: "Longest cause one block request may carry; a longer one is refused with 413.",
		Reloadable:  true,
	}, intType{1, 1 << 20})

	// BlocklistCauseMaxMergedLength bounds a node's cause after merges.
	BlocklistCauseMaxMergedLength = declare[int](Spec{
		Key: "blocklist.cause.max-merged-length", Default: "4096", Unit: "bytes",
		Description: "Longest cause a blocked node may have after merges (allowMerge joins causes with \",\"); a merge that would exceed it is refused with 413 and changes nothing.",
		Reloadable:  true,
	}, intType{1, 1 << 20})

	// BlocklistMaxNodes bounds the number of blocked nodes.
	BlocklistMaxNodes = declare[int](Spec{
		Key: "blocklist.max-nodes", Default: "1000", Unit: "nodes",
		Description: "Most nodes the blocklist holds at once; blocking one more is refused with 413 until a node is unblocked or expires. Merges into blocked nodes are not affected.",
		Reloadable:  true,
	}, intType{1, unlimited})

	// BlocklistCheckInterval is how often expired blocks are removed.
	BlocklistCheckInterval = declare[time.Duration](Spec{
		Key: "blocklist.check-interval", Default: "1 s",
		Description: "How often nodes whose block has expired are unblocked.",
		Reloadable:  true,
	}, durationType{min: time.Millisecond})
)

// ---- JobManager (AM) and REST ------------------------------------------------------------------

var (
	// JobManagerRPCAddress is the address TaskManagers use to reach the AM.
	JobManagerRPCAddress = declare[string](Spec{
		Key: "jobmanager.rpc.address", Default: "localhost",
		Description: "Host name or IP address TaskManagers use to reach the AM's RPC server.",
	}, stringType{check: checkNonEmpty, want: "a host name or address"})

	// JobManagerRPCPort is the AM's RPC port.
	JobManagerRPCPort = declare[int](Spec{
		Key: "jobmanager.rpc.port", Default: "6123",
		Description: "Port of the AM's RPC server; 0 picks a free port (YARN and Kubernetes do).",
	}, intType{0, anyPort})

	// JobManagerMemoryProcessSize is the AM container's total memory.
	JobManagerMemoryProcessSize = declare[MemorySize](Spec{
		Key: "jobmanager.memory.process.size", Default: "1600 mb", Unit: "bytes",
		Description: "Total memory of the AM process; the container size requested on YARN and Kubernetes.",
	}, memoryType{})

	// RestAddress is the address clients use to reach the REST API.
	RestAddress = declare[string](Spec{
		Key:         "rest.address",
		Description: "Address clients use to reach the REST API. Unset: jobmanager.rpc.address.",
	}, stringType{})

	// RestBindAddress is the address the REST server listens on.
	RestBindAddress = declare[string](Spec{
		Key: "rest.bind-address", Default: "127.0.0.1",
		Description: "Address the REST server binds to. tide binds to loopback by default (Flink: all interfaces); set 0.0.0.0 together with rest.auth.token to expose it.",
	}, stringType{check: checkNonEmpty, want: "a host name or address"})

	// RestPort is the REST server's port.
	RestPort = declare[int](Spec{
		Key: "rest.port", Default: "8081",
		Description: "Port of the REST API; 0 picks a free port.",
	}, intType{0, anyPort})

	// RestShutdownGracePeriod bounds how long the AM serves REST after the job ended.
	RestShutdownGracePeriod = declare[time.Duration](Spec{
		Key: "rest.shutdown.grace-period", Default: "30 s",
		Description: "After the job ends (FINISHED, CANCELED, FAILED) the AM keeps its REST API up, read-only (job status, checkpoints, the results of triggered operations), until clients have read the results they wait for (a stop-with-savepoint's savepoint path, or an operation the job's end failed), at most this long; then it exits. With nothing awaited it exits at once. 0: REST closes with the job. Flink's application mode shuts down when the job ends (execution.shutdown-on-application-finish: true) or never (false).",
	}, durationType{})

	// RestAuthToken is the bearer token REST clients must send.
	RestAuthToken = declare[string](Spec{
		Key:         "rest.auth.token",
		Description: "If set, REST requests must carry Authorization: Bearer <token>. Prefer rest.auth.token-file; set at most one of the two.",
		Secret:      true,
	}, stringType{})

	// RestAuthTokenFile names a file holding the REST bearer token.
	RestAuthTokenFile = declare[string](Spec{
		Key:         "rest.auth.token-file",
		Description: "File whose first line is the REST bearer token.",
	}, stringType{})

	// InternalSecretFile names a file holding the secret of the AM-TaskManager RPC and the data plane.
	InternalSecretFile = declare[string](Spec{
		Key:         "security.internal.secret-file",
		Description: "File (mode 600) whose first line is the shared secret the AM and every TaskManager prove to each other on the RPC connection and between TaskManagers on the data plane (at least 16 bytes). Required when jobmanager.rpc.address or a TaskManager's data plane (--host) is not a loopback address. Alternatives: security.internal.secret, or $TIDE_INTERNAL_SECRET. On YARN, tide run generates one per application and passes it in the containers' credentials.",
	}, stringType{})

	// InternalSecret is the internal secret itself; prefer InternalSecretFile.
	InternalSecret = declare[string](Spec{
		Key:         "security.internal.secret",
		Description: "The internal secret itself (see security.internal.secret-file, which is preferred); set at most one of the two.",
		Secret:      true,
	}, stringType{})
)

// ---- TaskManager -------------------------------------------------------------------------------

var (
	// TaskManagerNumberOfTaskSlots is the number of slots per TaskManager.
	TaskManagerNumberOfTaskSlots = declare[int](Spec{
		Key: "taskmanager.numberOfTaskSlots", Default: "1", Unit: "slots",
		Description: "Slots per TaskManager; each slot runs one subtask of every vertex of a slot-sharing group.",
	}, intType{1, unlimited})

	// TaskManagerNodeID is the node id a TaskManager reports for the blocklist.
	TaskManagerNodeID = declare[string](Spec{
		Key:         "taskmanager.node-id",
		Description: "Node id the TaskManager reports (the blocklist acts on it). Unset: the host name; on Kubernetes the pod's spec.nodeName.",
	}, stringType{})

	// TaskManagerDataPort is the port of the TaskManager's data plane.
	TaskManagerDataPort = declare[int](Spec{
		Key: "taskmanager.data.port", Default: "0",
		Description: "Port TaskManagers exchange records on; 0 picks a free port.",
	}, intType{0, anyPort})

	// NetworkBuffersPerChannel are the receive buffers (credits) each input channel grants
	// its producer.
	NetworkBuffersPerChannel = declare[int](Spec{
		Key: "taskmanager.network.memory.buffers-per-channel", Default: "2", Unit: "buffers",
		Description: "Network buffers (32 KiB each) a subtask grants every input channel as credits: a producer sends a buffer only against a credit, so this bounds what a slow consumer holds per channel and how far its producers run ahead before back pressure stops them. Flink 1.x's key (deprecated in Flink 1.20, which sizes gates from its network memory instead).",
	}, intType{1, 1 << 16})

	// NetworkFloatingBuffersPerGate are an input gate's receive buffers beyond the
	// per-channel ones.
	NetworkFloatingBuffersPerGate = declare[int](Spec{
		Key: "taskmanager.network.memory.floating-buffers-per-gate", Default: "8", Unit: "buffers",
		Description: "Network buffers an input gate (a subtask's channels from all producers of one input) has on top of buffers-per-channel per channel. tide splits them evenly over the gate's channels when the subtask starts (a gate of 2 channels: 4 more each; of 9 or more: none), where Flink hands them to channels with a backlog; either way a gate holds at most channels x buffers-per-channel + this many buffers. More credits keep a producer sending to another TaskManager while its buffers are in flight: WordCount on two TaskManagers of one machine ran 4-10% faster with these 4 more per channel than with none. Flink 1.x's key (deprecated in Flink 1.20).",
	}, intType{0, 1 << 16})

	// TaskManagerDebugPprofAddress turns on the TaskManager's Go profiling endpoint.
	TaskManagerDebugPprofAddress = declare[string](Spec{
		Key:         "taskmanager.debug.pprof.address",
		Description: "host:port on loopback where each TaskManager serves its Go profiles (CPU, allocations, heap, goroutines) under /debug/pprof/, for go tool pprof; port 0 picks a free one (logged). Unset: off. The endpoint has no authentication, so an address off loopback is refused.",
	}, stringType{})

	// ExecutionBufferTimeout is how long a partly filled network buffer may wait before it
	// is sent: the trade between latency and throughput.
	ExecutionBufferTimeout = declare[time.Duration](Spec{
		Key: "execution.buffer-timeout", Default: "100 ms",
		Description: "How long a partly filled network buffer waits for more records before it is sent, counted from its first record: 0 sends every record at once (lowest latency), -1 only full buffers (highest throughput; a barrier, watermark or end of input still flushes); any other negative value is refused. Unless it is 0, a subtask also hands the records of value types it emits (see the codecs in the README) to the network in runs of up to 256, at the latest when it ends the step that emitted them (a source's poll, a batch of input records). A setting of the job: the AM's value reaches every TaskManager when it registers and again when the file changes (the data plane and the print sink follow it while the job runs); a TaskManager's own value only serves jobs whose AM sends none.",
		Reloadable:  true,
	}, durationType{minusOne: true})

	// TaskManagerMemoryProcessSize is the TaskManager container's total memory.
	TaskManagerMemoryProcessSize = declare[MemorySize](Spec{
		Key: "taskmanager.memory.process.size", Default: "1728 mb", Unit: "bytes",
		Description: "Total memory of a TaskManager process; the container size requested on YARN and Kubernetes.",
	}, memoryType{})

	// TaskManagerMemoryManagedSize is the TaskManager's managed memory (Pebble's block cache
	// and memtables).
	TaskManagerMemoryManagedSize = declare[MemorySize](Spec{
		Key: "taskmanager.memory.managed.size", Unit: "bytes",
		Description: "Managed memory of a TaskManager: the pebble state backend's block cache and memtables, one budget shared by all its slots (memtables sized per slot from half of it). Unset: taskmanager.memory.managed.fraction of taskmanager.memory.process.size.",
	}, memoryType{})

	// TaskManagerMemoryManagedFraction derives managed memory from the process size.
	TaskManagerMemoryManagedFraction = declare[float64](Spec{
		Key: "taskmanager.memory.managed.fraction", Default: "0.4",
		Description: "Share of taskmanager.memory.process.size given to managed memory when taskmanager.memory.managed.size is unset (Flink's default 0.4, taken of the whole process: a Go TaskManager has no JVM overhead or metaspace to subtract). The TaskManager also sets Go's soft memory limit (unless GOMEMLIMIT is set) to the process size minus managed memory.",
	}, floatType{0, 1})
)

// ---- YARN --------------------------------------------------------------------------------------

var (
	// YarnApplicationName is the YARN application name.
	YarnApplicationName = declare[string](Spec{
		Key:         "yarn.application.name",
		Description: "Name of the YARN application. Unset: the job name.",
	}, stringType{})

	// YarnApplicationQueue is the YARN queue.
	YarnApplicationQueue = declare[string](Spec{
		Key:         "yarn.application.queue",
		Description: "YARN queue to submit to. Unset: the scheduler's default queue.",
	}, stringType{})

	// YarnApplicationAttempts is how many AM attempts YARN makes.
	YarnApplicationAttempts = declare[int](Spec{
		Key: "yarn.application-attempts", Default: "2", Unit: "attempts",
		Description: "AM attempts YARN makes; each new attempt adopts the subtasks the TaskManagers kept running, or recovers the job from the latest checkpoint. Flink defaults to 1 without high availability.",
	}, intType{1, unlimited})

	// YarnAttemptFailuresValidityInterval is YARN's window for counting failed AM attempts.
	YarnAttemptFailuresValidityInterval = declare[time.Duration](Spec{
		Key: "yarn.application-attempt-failures-validity-interval", Default: "-1",
		Description: "Only AM attempts that failed within this window count towards yarn.application-attempts (and the ResourceManager's yarn.resourcemanager.am.max-attempts cap), so a long-running job survives any number of AM failures spaced further apart; -1 counts every failure. A plain number is milliseconds. Flink defaults to 10 s.",
	}, durationType{minusOne: true})

	// YarnAppMasterVcores is the AM container's virtual cores.
	YarnAppMasterVcores = declare[int](Spec{
		Key: "yarn.appmaster.vcores", Default: "1", Unit: "vcores",
		Description: "Virtual cores of the AM container.",
	}, intType{1, unlimited})

	// YarnHeartbeatInterval is the AM's allocate interval while no container is pending.
	YarnHeartbeatInterval = declare[time.Duration](Spec{
		Key: "yarn.heartbeat.interval", Default: "5 s",
		Description: "Interval of the AM's heartbeat (allocate) to the ResourceManager while no container is pending.",
	}, durationType{min: time.Millisecond})

	// YarnHeartbeatContainerRequestInterval is the allocate interval while containers are pending.
	YarnHeartbeatContainerRequestInterval = declare[time.Duration](Spec{
		Key: "yarn.heartbeat.container-request-interval", Default: "500 ms",
		Description: "Interval of the AM's heartbeat (allocate) while containers are requested but not yet granted.",
	}, durationType{min: time.Millisecond})

	// YarnResourceManagerAddress overrides the ResourceManager address of yarn-site.xml.
	YarnResourceManagerAddress = declare[string](Spec{
		Key:         "yarn.resourcemanager.address",
		Description: "host:port of the ResourceManager's client protocol. Unset: from yarn-site.xml under HADOOP_CONF_DIR or YARN_CONF_DIR.",
	}, stringType{})

	// YarnResourceManagerSchedulerAddress overrides the scheduler address of yarn-site.xml.
	YarnResourceManagerSchedulerAddress = declare[string](Spec{
		Key:         "yarn.resourcemanager.scheduler.address",
		Description: "host:port of the ResourceManager's scheduler (AM) protocol. Unset: from yarn-site.xml, or the AM's environment inside YARN.",
	}, stringType{})

	// YarnStagingDirectory is where tide run --target yarn-per-job uploads the binary and configuration.
	YarnStagingDirectory = declare[string](Spec{
		Key:         "yarn.staging-directory",
		Description: "Staging directory on HDFS for the tide binary and configuration of a submission. Unset: /user/<user>/.tide on the default file system.",
	}, stringType{})

	// YarnNodeIDFormat says how YARN NodeManagers are named as blocklist nodes.
	YarnNodeIDFormat = declare[string](Spec{
		Key: "tide.yarn.node-id-format", Default: "host",
		Description: "How a NodeManager is named as a node for the blocklist and TaskManager node ids: host, or host-port for clusters with several NodeManagers per host (yarn.scheduler.include-port-in-node-name: true, as in MiniYARNCluster).",
	}, enumType{values: []string{"host", "host-port"}})

	// SlotManagerNumberOfSlotsMax bounds the slots an active driver (YARN) starts TaskManagers for.
	SlotManagerNumberOfSlotsMax = declare[int](Spec{
		Key: "slotmanager.number-of-slots.max", Unit: "slots", Reloadable: true,
		Description: "Most slots a driver that starts TaskManagers itself (YARN, Kubernetes) asks for; reactive mode grows the job up to it. Unset: no bound (required in reactive mode on YARN and Kubernetes). Raised while the job runs, the AM asks for the TaskManagers at once.",
	}, intType{1, unlimited})

	// YarnContainersVcores is a TaskManager container's virtual cores; -1 uses the slot count.
	YarnContainersVcores = declare[int](Spec{
		Key: "yarn.containers.vcores", Default: "-1", Unit: "vcores",
		Description: "Virtual cores of each TaskManager container; -1 uses taskmanager.numberOfTaskSlots.",
	}, vcoresType{})
)

// ---- Kubernetes --------------------------------------------------------------------------------

var (
	// KubernetesNamespace is the namespace TaskManager pods are created in.
	KubernetesNamespace = declare[string](Spec{
		Key: "kubernetes.namespace", Default: "default",
		Description: "Namespace the AM creates TaskManager pods in.",
	}, stringType{check: checkNonEmpty, want: "a namespace name"})

	// KubernetesNodeNameLabel is the node label used to keep pods off blocked nodes.
	KubernetesNodeNameLabel = declare[string](Spec{
		Key: "kubernetes.node-name-label", Default: "kubernetes.io/hostname",
		Description: "Node label matched by the NotIn node affinity that keeps new TaskManager pods off blocked nodes.",
	}, stringType{check: checkNonEmpty, want: "a node label key"})

	// KubernetesClusterID names the tide cluster on Kubernetes: pod names and labels derive from it.
	KubernetesClusterID = declare[string](Spec{
		Key:         "kubernetes.cluster-id",
		Description: "Name of the cluster on Kubernetes: TaskManager pods are named <cluster-id>-taskmanager-<attempt>-<n> and labelled app=<cluster-id>; at most 45 characters. Unset: tide-<job name>.",
	}, stringType{})

	// KubernetesContainerImage is the image of AM and TaskManager pods.
	KubernetesContainerImage = declare[string](Spec{
		Key: "kubernetes.container.image", Default: "tide:latest",
		Description: "Container image of the AM and TaskManager pods; it holds the tide binary at kubernetes.tide.binary.",
	}, stringType{check: checkNonEmpty, want: "an image reference"})

	// KubernetesContainerImagePullPolicy is the pull policy of that image.
	KubernetesContainerImagePullPolicy = declare[string](Spec{
		Key: "kubernetes.container.image.pull-policy", Default: "IfNotPresent",
		Description: "Pull policy of kubernetes.container.image.",
	}, enumType{values: []string{"IfNotPresent", "Always", "Never"}})

	// KubernetesServiceAccount is the service account of the AM and TaskManager pods.
	KubernetesServiceAccount = declare[string](Spec{
		Key: "kubernetes.service-account", Default: "default",
		Description: "Service account of the AM and TaskManager pods; the AM's needs to create, list, watch and delete pods and list nodes. Unset, tide run --target kubernetes-application creates one named <cluster-id> with the Role the AM needs; set, the account must exist and have those rights.",
	}, stringType{check: checkNonEmpty, want: "a service account name"})

	// KubernetesTaskManagerCPU is the CPU request and limit of a TaskManager pod.
	KubernetesTaskManagerCPU = declare[float64](Spec{
		Key: "kubernetes.taskmanager.cpu", Default: "-1", Unit: "cores",
		Description: "CPU of each TaskManager pod (request and limit); -1 uses taskmanager.numberOfTaskSlots.",
	}, floatType{-1, math.Inf(1)})

	// KubernetesTideBinary is the tide binary's path inside the image (Flink's
	// kubernetes.entry.path, there the image's entry script).
	KubernetesTideBinary = declare[string](Spec{
		Key: "kubernetes.entry.path", Default: "/opt/tide/bin/tide", Fallback: []string{"kubernetes.tide.binary"},
		Description: "Path of the tide binary inside kubernetes.container.image; the AM and TaskManager pods run it as their command (Flink's key, where it names the image's entry script).",
	}, stringType{check: checkNonEmpty, want: "a path"})

	// KubernetesRestServiceExposedType is the type of the cluster's REST Service.
	KubernetesRestServiceExposedType = declare[string](Spec{
		Key: "kubernetes.rest-service.exposed.type", Default: "ClusterIP",
		Description: "Type of the Service in front of the AM's REST and RPC ports: ClusterIP (reach it with kubectl port-forward), NodePort or LoadBalancer (tide commands with -m kubernetes:<cluster-id> then use the Service's address).",
	}, enumType{values: []string{"ClusterIP", "NodePort", "LoadBalancer"}})

	// KubernetesConfigFile is the kubeconfig the client uses.
	KubernetesConfigFile = declare[string](Spec{
		Key:         "kubernetes.config.file",
		Description: "kubeconfig file of the client commands (tide run --target kubernetes-application, -m kubernetes:<cluster-id>). Unset: $KUBECONFIG, else ~/.kube/config; in a pod, its service account.",
	}, stringType{})

	// KubernetesJobManagerCPU is the CPU request and limit of the AM pod.
	KubernetesJobManagerCPU = declare[float64](Spec{
		Key: "kubernetes.jobmanager.cpu", Default: "1.0", Unit: "cores",
		Description: "CPU of the AM pod (request and limit).",
	}, floatType{0.001, math.Inf(1)})

	// KubernetesConfDir is where pods mount the cluster's ConfigMap holding flink-conf.yaml.
	KubernetesConfDir = declare[string](Spec{
		Key: "kubernetes.flink.conf.dir", Default: "/opt/tide/conf",
		Description: "Directory in the AM and TaskManager pods where the ConfigMap holding flink-conf.yaml is mounted.",
	}, stringType{check: checkNonEmpty, want: "a path"})
)

// ---- Metrics and logging -----------------------------------------------------------------------

var (
	// MetricsReporters lists the metric reporters to start.
	MetricsReporters = declare[[]string](Spec{
		Key:         "metrics.reporters",
		Description: "Reporters to start, separated by ';' (tide ships prom). Unset: none. Reporter settings live under metrics.reporter.<name>.*.",
	}, listType{})

	// MetricsPrometheusPort is the port of the Prometheus reporter.
	MetricsPrometheusPort = declare[int](Spec{
		Key: "metrics.reporter.prom.port", Default: "9249",
		Description: "Port the prom reporter serves /metrics on; 0 picks a free port.",
	}, intType{0, anyPort})

	// EnvLogDir is the directory log files are written to.
	EnvLogDir = declare[string](Spec{
		Key:         "env.log.dir",
		Description: "Directory the scripts in bin/ write log files to. Unset: log/ next to bin/.",
	}, stringType{})
)

// maxParallelismType is -1 (derive) or 1..32768.
type maxParallelismType struct{ intType }

func (maxParallelismType) parse(raw string) (int, string) {
	n, problem := intType{-1, maxParallelism}.parse(raw)
	if problem == "" && n == 0 {
		return 0, "is out of range"
	}
	return n, problem
}

func (maxParallelismType) expected() string {
	return "-1 (derived) or an integer between 1 and 32768"
}

// vcoresType is -1 (use the slot count) or ≥ 1.
type vcoresType struct{ intType }

func (vcoresType) parse(raw string) (int, string) {
	n, problem := intType{-1, unlimited}.parse(raw)
	if problem == "" && n == 0 {
		return 0, "is out of range"
	}
	return n, problem
}

func (vcoresType) expected() string { return "-1 (one per slot) or an integer ≥ 1" }

func checkNonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty"
	}
	return ""
}

// checkStorageURIs checks a ';'-separated list of storage URIs or absolute paths.
func checkStorageURIs(s string) string {
	for _, e := range strings.Split(s, ";") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if p := checkStorageURI(e); p != "" {
			return fmt.Sprintf("%q %s", e, p)
		}
	}
	return ""
}

func checkStorageURI(s string) string {
	if filepath.IsAbs(s) {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return "is not a URI"
	}
	switch u.Scheme {
	case "hdfs", "file":
		if u.Path == "" {
			return "has no path"
		}
		return ""
	case "":
		return "is a relative path"
	default:
		return "has an unsupported scheme " + u.Scheme
	}
}
