package core

import (
	"time"

	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/keygroups"
)

// Effect is one output of the scheduler that the AM carries out. Effects are returned
// by Step in the order they must be applied.
type Effect interface{ isEffect() }

// TimerID names a timer; TimerKind says what it is for (for logs and golden files).
type TimerID uint64

// StartTimer asks the AM to deliver TimerFired{Timer, Version} after the given duration.
type StartTimer struct {
	Timer   TimerID
	Kind    string
	After   time.Duration
	Version uint64
}

// SlotAssignment places subtasks into one slot: subtask i of every vertex of one
// slot-sharing group shares a slot.
type SlotAssignment struct {
	Slot     SlotID
	Subtasks []SubtaskID
}

// VertexDeployment is the parallelism a vertex runs at in an attempt.
type VertexDeployment struct {
	Vertex         VertexID
	Parallelism    int
	MaxParallelism int
	// KeyGroups are the key-group ranges by subtask index (sticky and balanced, see
	// core/keygroups); TaskManagers use them instead of recomputing Flink's split.
	KeyGroups keygroups.Assignment
}

// Deploy starts a new attempt of the job: every listed subtask is deployed into its
// slot and restores from RestoreFrom (0: no checkpoint yet, start fresh). The AM reports
// each subtask's state back with TaskStateChanged.
type Deploy struct {
	Attempt     AttemptID
	Vertices    []VertexDeployment
	Slots       []SlotAssignment
	RestoreFrom CheckpointID
	// Adopted: the attempt already runs (taken over from the previous AM after a failover,
	// see adoption.go); nothing is deployed, the TaskManagers are told to carry on.
	Adopted bool
}

// CancelAttempt asks every TaskManager to cancel the tasks of the attempt; they report
// CANCELED (or FAILED/FINISHED) per subtask. Subtasks on lost TaskManagers count as gone.
type CancelAttempt struct {
	Attempt AttemptID
	Reason  string
}

// RejectTaskManager refuses a registration (for example from a blocked node).
type RejectTaskManager struct {
	TaskManager TaskManagerID
	Reason      string
}

// ReleaseTaskManager disconnects a TaskManager and releases its worker (idle after a
// downscale, evacuated from a blocked node, or heartbeat timed out). With KeepProcess
// (standalone, where nothing would start it again) the AM only drops the connection: the
// TaskManager process stays, reconnects and registers again.
type ReleaseTaskManager struct {
	TaskManager TaskManagerID
	Reason      string
	KeepProcess bool
}

// DeclareResources tells the driver how many slots the job wants in total;
// Unbounded (reactive mode) means "every slot offered".
type DeclareResources struct {
	Slots     int
	Unbounded bool
}

// RequestWorkers asks an active driver (YARN, Kubernetes) for more workers.
type RequestWorkers struct{ Count int }

// JobStatusChanged reports a change of the job status Flink's clients see.
type JobStatusChanged struct {
	From, To JobStatus
	Cause    string
}

// JobTerminated: the scheduler reached Finished; the AM deregisters and exits.
type JobTerminated struct {
	Status JobStatus
	Cause  string
}

// BlocklistChanged carries the full current blocked set, for drivers (YARN
// updateBlacklist, Kubernetes node affinity) and the REST API.
type BlocklistChanged struct{ Blocked []blocklist.BlockedNode }

// RescaleRecorded: a rescale finished (or was abandoned) and was added to the history.
type RescaleRecorded struct{ Rescale Rescale }

func (StartTimer) isEffect()         {}
func (Deploy) isEffect()             {}
func (CancelAttempt) isEffect()      {}
func (RejectTaskManager) isEffect()  {}
func (ReleaseTaskManager) isEffect() {}
func (DeclareResources) isEffect()   {}
func (RequestWorkers) isEffect()     {}
func (JobStatusChanged) isEffect()   {}
func (JobTerminated) isEffect()      {}
func (BlocklistChanged) isEffect()   {}
func (RescaleRecorded) isEffect()    {}
