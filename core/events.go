package core

import "github.com/tidestream/tide/core/blocklist"

// Event is one input to the scheduler. The AM's event loop hands every event to
// Scheduler.Step together with the current time; nothing else moves the core.
type Event interface{ isEvent() }

// Start begins scheduling a job that is in Created (Flink's startScheduling).
type Start struct{}

// TaskManagerRegistered: a TaskManager connected and offers all of its slots.
// A registration from a blocked node is refused with a RejectTaskManager effect.
type TaskManagerRegistered struct {
	TaskManager TaskManagerID
	Node        NodeID
	Slots       int
	// Tasks are the subtasks it still runs from an earlier AM (after an AM failover);
	// see adoption.go.
	Tasks []ReportedTask
}

// TaskManagerHeartbeat: a sign of life; the heartbeat timeout is only the fallback
// failure detector (a dropped connection arrives as TaskManagerLost at once).
type TaskManagerHeartbeat struct{ TaskManager TaskManagerID }

// TaskManagerLost: the TaskManager's connection dropped, the driver reported its
// worker terminated, or it unregistered. Its slots and subtasks are gone at once.
type TaskManagerLost struct {
	TaskManager TaskManagerID
	Reason      string
}

// TaskStateChanged reports the state of one subtask of one deployment attempt.
// Reports for any attempt other than the current one are stale and dropped.
type TaskStateChanged struct {
	Attempt AttemptID
	Subtask SubtaskID
	State   TaskState
	// Error describes a FAILED task; Unrecoverable marks failures that no restart can fix.
	Error         string
	Unrecoverable bool
	// LostPeer: the subtask FAILED because its data connection to this TaskManager broke.
	// Such a failure is part of that TaskManager's loss (see peer_loss.go).
	LostPeer TaskManagerID
}

// CheckpointCompleted / CheckpointFailed come from the checkpoint coordinator; the
// scheduler uses them as rescale triggers and as the restore point of the next attempt.
type CheckpointCompleted struct {
	Attempt    AttemptID
	Checkpoint CheckpointID
}

type CheckpointFailed struct {
	Attempt    AttemptID
	Checkpoint CheckpointID
	Reason     string
}

// TimerFired returns a StartTimer effect. A timer whose Version is not the
// scheduler's current state version is stale: dropped and counted.
type TimerFired struct {
	Timer   TimerID
	Version uint64
}

// CancelJob cancels the job from any state (REST PATCH ?mode=cancel, tide cancel).
type CancelJob struct{}

// SuspendJob stops the job without a terminal outcome (the AM is shutting down or lost
// leadership); the job ends SUSPENDED and a new AM attempt may resume it.
type SuspendJob struct{ Reason string }

// GlobalFailure: a failure of the job as a whole (for example a coordinator error).
type GlobalFailure struct {
	Error         string
	Unrecoverable bool
}

// Bounds is a vertex's parallelism range; -1 means "the default bound" (1 for Lower,
// maxParallelism for Upper) as in Flink's FLIP-291 REST API.
type Bounds struct{ Lower, Upper int }

// UpdateResourceRequirements sets new per-vertex bounds (FLIP-291). Refused in reactive
// mode; every vertex must be present.
type UpdateResourceRequirements struct {
	Requirements map[VertexID]Bounds
}

// UpdateOptions applies a live configuration reload (only the reloadable fields).
type UpdateOptions struct{ Options Options }

// BlockNodes adds (or merges) blocked nodes; UnblockNodes removes them.
type BlockNodes struct{ Nodes []blocklist.BlockedNode }

type UnblockNodes struct{ Nodes []NodeID }

// WorkerRequestFailed: an active driver could not start a requested worker.
type WorkerRequestFailed struct{ Reason string }

// WorkersExpected names TaskManagers known to be on their way that the scheduler did not
// ask for itself: containers adopted from a previous AM attempt that have not registered
// again yet, or TaskManagers the local launcher started. A deployment waits for them
// (bounded by the submission stabilization timeout). One that terminates before it
// registers arrives as TaskManagerLost.
type WorkersExpected struct{ TaskManagers []TaskManagerID }

// DriverFatalError: the resource manager driver cannot go on (the job fails).
type DriverFatalError struct{ Error string }

func (Start) isEvent()                      {}
func (TaskManagerRegistered) isEvent()      {}
func (TaskManagerHeartbeat) isEvent()       {}
func (TaskManagerLost) isEvent()            {}
func (TaskStateChanged) isEvent()           {}
func (CheckpointCompleted) isEvent()        {}
func (CheckpointFailed) isEvent()           {}
func (TimerFired) isEvent()                 {}
func (CancelJob) isEvent()                  {}
func (SuspendJob) isEvent()                 {}
func (GlobalFailure) isEvent()              {}
func (UpdateResourceRequirements) isEvent() {}
func (UpdateOptions) isEvent()              {}
func (BlockNodes) isEvent()                 {}
func (UnblockNodes) isEvent()               {}
func (WorkerRequestFailed) isEvent()        {}
func (WorkersExpected) isEvent()            {}
func (DriverFatalError) isEvent()           {}
