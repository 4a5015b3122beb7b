package worker

import "log/slog"

// dropLocalState deletes the job's entries in the local state store (tm/localstate) when
// the job has ended for good: the AM said so in its Disconnect (job_ended: finished,
// cancelled or failed, so no attempt restores from them). Without it the copies of the
// checkpoints' files would stay on the TaskManager's disk after the job. Called once the
// subtasks are closed (closed: the executor closed in time), so no subtask or warm-up
// writes an entry afterwards; with subtasks that may still run, the state stays.
//
// A job that is only suspended (its AM stopped; a new attempt may resume it), a
// TaskManager released while the job goes on, a lost AM and a stopping TaskManager keep
// the state: a TaskManager that comes back with the same directory restores from it.
func (h *heldJob) dropLocalState(closed bool, log *slog.Logger) {
	if h.localState == nil || !h.ended {
		return
	}
	if !closed {
		log.Warn("the job ended but its subtasks did not close in time: its local state stays", "dir", h.localState.Dir())
		return
	}
	h.localState.DropJob(h.jobID)
	log.Info("the job ended: its local state is deleted", "dir", h.localState.Dir())
}
