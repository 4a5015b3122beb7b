package am

// Every metric the AM exports is declared here, once. Names are Flink's (camelCase), so
// dashboards built for Flink's Prometheus reporter find them under tide_ instead of flink_:
// tide_jobmanager_<name> for the process, tide_jobmanager_job_<name>{job_id,job_name} for
// the job.

// metricKind says how a metric behaves.
type metricKind int

const (
	// counterMetric only grows; the AM adds the growth of a cumulative count.
	counterMetric metricKind = iota
	// gaugeMetric is a current value.
	gaugeMetric
)

// metricScope says which scope a metric belongs to.
type metricScope int

const (
	jobManagerScope metricScope = iota
	jobScope
)

// metricDef declares one metric.
type metricDef struct {
	Name  string
	Kind  metricKind
	Scope metricScope
	Help  string
}

var (
	metricNumRestarts = metricDef{"numRestarts", counterMetric, jobScope,
		"restarts of the job after failures and rescales"}
	metricNumRescales = metricDef{"numRescales", counterMetric, jobScope,
		"completed rescales that changed the parallelism"}
	metricUptime = metricDef{"uptime", gaugeMetric, jobScope,
		"milliseconds the job has been RUNNING without interruption; 0 when it is not running"}
	metricDowntime = metricDef{"downtime", gaugeMetric, jobScope,
		"milliseconds the job has been failing or restarting since it last ran; 0 while it runs"}
	metricRestartingTime = metricDef{"restartingTime", gaugeMetric, jobScope,
		"milliseconds of the current restart, or of the last one once the job runs again"}
	metricParallelism = metricDef{"parallelism", gaugeMetric, jobScope,
		"parallelism of each vertex (tag vertex) in the running attempt; 0 when none runs"}
	metricNumRegisteredTaskManagers = metricDef{"numRegisteredTaskManagers", gaugeMetric, jobManagerScope,
		"TaskManagers registered with the AM"}
	metricTaskSlotsTotal = metricDef{"taskSlotsTotal", gaugeMetric, jobManagerScope,
		"usable slots of the registered TaskManagers (not on blocked nodes)"}
	metricTaskSlotsAvailable = metricDef{"taskSlotsAvailable", gaugeMetric, jobManagerScope,
		"usable slots with nothing deployed in them"}
	metricCompletedCheckpoints = metricDef{"numberOfCompletedCheckpoints", counterMetric, jobScope,
		"checkpoints completed since the AM started"}
	metricFailedCheckpoints = metricDef{"numberOfFailedCheckpoints", counterMetric, jobScope,
		"checkpoints failed since the AM started"}
	metricLastCheckpointDuration = metricDef{"lastCheckpointDuration", gaugeMetric, jobScope,
		"milliseconds the latest completed checkpoint took from trigger to completion"}
	metricLastCheckpointSize = metricDef{"lastCheckpointSize", gaugeMetric, jobScope,
		"bytes of state in the latest completed checkpoint"}
	metricNumBlockedNodes = metricDef{"numBlockedNodes", gaugeMetric, jobManagerScope,
		"nodes on the blocklist (FLIP-224)"}
	metricConfigReloads = metricDef{"configReloads", counterMetric, jobManagerScope,
		"accepted live reloads of flink-conf.yaml"}
	metricConfigReloadFailures = metricDef{"configReloadFailures", counterMetric, jobManagerScope,
		"changed configuration files rejected (the old configuration stayed)"}
	metricWarmupCopies = metricDef{"warmupCopies", gaugeMetric, jobScope,
		"warm-up copies of the planned move in progress (state.warmup.timeout, max.warmup.replicas); 0 when none"}
	metricWarmupLag = metricDef{"warmupLag", gaugeMetric, jobScope,
		"checkpoints the furthest-behind warm-up copy lags the newest completed checkpoint; 0 when none or all caught up"}
	metricStandbyCopies = metricDef{"standbyCopies", gaugeMetric, jobScope,
		"standby copies of key-group ranges kept on other TaskManagers (num.standby.replicas)"}
	metricStandbyLag = metricDef{"standbyLag", gaugeMetric, jobScope,
		"checkpoints the furthest-behind standby copy lags the newest completed checkpoint"}
	metricStaleEventsDropped = metricDef{"staleEventsDropped", counterMetric, jobScope,
		"timers, task reports and answers of an older scheduler state or attempt that the core dropped"}
	metricLastFailoverAdopted = metricDef{"lastFailoverAdopted", gaugeMetric, jobScope,
		"after an AM failover: 1 when this AM adopted the subtasks that kept running, 0 when it restored them from the latest checkpoint; -1 when it took over no running job or is still collecting reports"}
	metricLastFailoverDecisionTime = metricDef{"lastFailoverDecisionTime", gaugeMetric, jobScope,
		"milliseconds from this AM's start until it adopted or restored the job the previous AM ran; 0 until then or without a failover"}
)

// allMetrics lists every declared metric; the registry creates them all at start-up.
var allMetrics = []metricDef{
	metricNumRestarts, metricNumRescales, metricUptime, metricDowntime, metricRestartingTime,
	metricParallelism, metricNumRegisteredTaskManagers, metricTaskSlotsTotal, metricTaskSlotsAvailable,
	metricCompletedCheckpoints, metricFailedCheckpoints, metricLastCheckpointDuration, metricLastCheckpointSize,
	metricNumBlockedNodes, metricConfigReloads, metricConfigReloadFailures, metricStaleEventsDropped,
	metricWarmupCopies, metricWarmupLag, metricStandbyCopies, metricStandbyLag,
	metricLastFailoverAdopted, metricLastFailoverDecisionTime,
}

// taskMetricDef declares one metric of a subtask, exported as
// tide_jobmanager_job_task_<name>{job_id,job_name,vertex,subtask_index} from the samples
// the TaskManagers send. Counts restart with every attempt, so all of them are gauges.
type taskMetricDef struct {
	Name  string
	Help  string
	value func(SubtaskMetrics) float64
}

var taskMetricDefs = []taskMetricDef{
	{"numRecordsIn", "records the subtask received (a source: read) in the current attempt",
		func(m SubtaskMetrics) float64 { return float64(m.RecordsIn) }},
	{"numRecordsOut", "records the subtask sent downstream in the current attempt",
		func(m SubtaskMetrics) float64 { return float64(m.RecordsOut) }},
	{"numBytesIn", "bytes the subtask received from upstream subtasks in the current attempt (a record from the same TaskManager passed unencoded counts its header only)",
		func(m SubtaskMetrics) float64 { return float64(m.BytesIn) }},
	{"numBytesOut", "bytes the subtask sent downstream in the current attempt (a record to the same TaskManager passed unencoded counts its header only)",
		func(m SubtaskMetrics) float64 { return float64(m.BytesOut) }},
	{"numRecordsInPerSecond", "records received per second over the last sample interval",
		func(m SubtaskMetrics) float64 { return m.RecordsInPerSecond }},
	{"numRecordsOutPerSecond", "records sent per second over the last sample interval",
		func(m SubtaskMetrics) float64 { return m.RecordsOutPerSecond }},
	{"numBytesInPerSecond", "bytes received per second over the last sample interval",
		func(m SubtaskMetrics) float64 { return m.BytesInPerSecond }},
	{"numBytesOutPerSecond", "bytes sent per second over the last sample interval",
		func(m SubtaskMetrics) float64 { return m.BytesOutPerSecond }},
	{"busyTimeMsPerSecond", "milliseconds per second the subtask was neither idle nor back-pressured",
		func(m SubtaskMetrics) float64 { return m.BusyMsPerSecond }},
	{"backPressuredTimeMsPerSecond", "milliseconds per second the subtask waited for a consumer's credit",
		func(m SubtaskMetrics) float64 { return m.BackPressuredMsPerSecond }},
	{"idleTimeMsPerSecond", "milliseconds per second the subtask waited for input",
		func(m SubtaskMetrics) float64 { return m.IdleMsPerSecond }},
	{"currentInputWatermark", "the subtask's current watermark in milliseconds (0 before the first)",
		func(m SubtaskMetrics) float64 {
			if !m.HasWatermark {
				return 0
			}
			return float64(m.InputWatermark)
		}},
	{"checkpointAlignmentTime", "milliseconds the barriers of the last checkpoint took to align at the subtask",
		func(m SubtaskMetrics) float64 { return float64(m.LastAlignment.Milliseconds()) }},
	{"checkpointedStateSize", "bytes of the subtask's state in its last acknowledged checkpoint",
		func(m SubtaskMetrics) float64 { return float64(m.StateSize) }},
	{"pendingRecords", "records a source subtask's splits still have to read, where the source knows (FLIP-33)",
		func(m SubtaskMetrics) float64 { return float64(m.PendingRecords) }},
}
