package core

// JobStatus is the status Flink's clients see (REST /jobs/:jobid/status).
type JobStatus string

const (
	StatusInitializing JobStatus = "INITIALIZING"
	StatusCreated      JobStatus = "CREATED"
	StatusRunning      JobStatus = "RUNNING"
	StatusRestarting   JobStatus = "RESTARTING"
	StatusCancelling   JobStatus = "CANCELLING"
	StatusFailing      JobStatus = "FAILING"
	StatusFinished     JobStatus = "FINISHED"
	StatusCanceled     JobStatus = "CANCELED"
	StatusFailed       JobStatus = "FAILED"
	StatusSuspended    JobStatus = "SUSPENDED"
)

// IsTerminal reports whether the job will never run again in this AM.
func (s JobStatus) IsTerminal() bool {
	switch s {
	case StatusFinished, StatusCanceled, StatusFailed, StatusSuspended:
		return true
	}
	return false
}

// TaskState is the state of one subtask execution (Flink's ExecutionState subset).
type TaskState string

const (
	TaskDeploying    TaskState = "DEPLOYING"
	TaskInitializing TaskState = "INITIALIZING"
	TaskRunning      TaskState = "RUNNING"
	TaskFinished     TaskState = "FINISHED"
	TaskCanceled     TaskState = "CANCELED"
	TaskFailed       TaskState = "FAILED"
)

// IsTerminal reports whether the subtask has stopped (its slot can be reused).
func (s TaskState) IsTerminal() bool {
	return s == TaskFinished || s == TaskCanceled || s == TaskFailed
}
