package am

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/rpc"
)

// apply carries out one effect of the core (loop goroutine).
func (a *AM) apply(eff core.Effect) {
	switch e := eff.(type) {
	case core.StartTimer:
		a.clock.AfterFunc(e.After, func() {
			a.post(func() { a.step(core.TimerFired{Timer: e.Timer, Version: e.Version}) })
		})
	case core.Deploy:
		a.warm.deployed(e)
		a.deploy(e)
	case core.CancelAttempt:
		a.log.Info("cancelling attempt", "attempt", e.Attempt, "reason", e.Reason)
		a.ckpt.cancelled("attempt cancelled: " + e.Reason)
		msg := &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Cancel{Cancel: &rpc.CancelTasks{Attempt: int64(e.Attempt), Reason: e.Reason}}}
		for _, s := range a.sessions {
			s.send(msg)
		}
	case core.CancelReported:
		a.cancelReported(e)
	case core.RejectTaskManager:
		a.log.Warn("rejecting TaskManager", "taskmanager", e.TaskManager, "reason", e.Reason)
		if s, ok := a.sessions[e.TaskManager]; ok {
			delete(a.sessions, e.TaskManager)
			a.view.taskManagerLeft(e.TaskManager)
			if sd, ok := a.driver.(interface{ Forget(core.TaskManagerID) }); ok {
				sd.Forget(e.TaskManager)
			}
			s.sendAndClose(rejectedMsg(e.Reason))
		}
	case core.ReleaseTaskManager:
		a.release(e)
	case core.DeclareResources:
		a.log.Info("declared resources", "slots", e.Slots, "unbounded", e.Unbounded)
	case core.RequestWorkers:
		a.requestWorkers(e.Count)
	case core.JobStatusChanged:
		a.log.Info("job status changed", "from", e.From, "to", e.To, "cause", e.Cause)
		a.view.statusChanged(e.To, a.clock.Now())
		a.ckpt.jobStatus(e.To)
		if e.From == core.StatusRunning && e.To != core.StatusRunning && a.deployRecord != nil {
			a.deployRecord, a.stateDirty = nil, true // nothing runs that a next AM could adopt
		}
	case core.JobTerminated:
		a.terminated, a.final, a.finalCause = true, e.Status, e.Cause
		a.view.statusChanged(e.Status, a.clock.Now())
	case core.BlocklistChanged:
		nodes := make([]core.NodeID, 0, len(e.Blocked))
		for _, b := range e.Blocked {
			nodes = append(nodes, core.NodeID(b.ID))
		}
		a.blocked.set(nodes)
		a.view.setBlocked(e.Blocked)
		a.log.Info("blocklist changed", "blocked", len(nodes))
	case core.RescaleRecorded:
		r := e.Rescale
		a.log.Info("rescale recorded", "rescale", r.ID, "trigger", r.Trigger, "outcome", r.Outcome,
			"parallelism", r.ParallelismChange(), "took", r.Duration(), "attempt", r.Attempt, "cause", r.Cause)
		a.view.addRescale(e.Rescale)
		a.rescaleRecorded(e.Rescale)
	case core.WarmUp:
		a.warmUp(e)
	case core.StopWarmup:
		a.stopWarmup(e)
	default:
		a.log.Error("unknown effect from the core", "type", fmt.Sprintf("%T", eff))
	}
}

func (a *AM) release(e core.ReleaseTaskManager) {
	if e.KeepProcess {
		a.dropConnection(e)
		return
	}
	a.log.Info("releasing TaskManager", "taskmanager", e.TaskManager, "reason", e.Reason)
	// Tell the TaskManager to go before its driver stops it: a container driver (YARN)
	// reports the worker terminated at once, which ends the session, and a TaskManager
	// that sees its stream end without a Disconnect reconnects, only to be rejected on
	// a blocked node. After sendAndClose the session's end lets the Disconnect out first.
	if s, ok := a.sessions[e.TaskManager]; ok {
		s.sendAndClose(disconnectMsg(e.Reason))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	driver := a.driver
	go func() {
		defer cancel()
		if err := driver.ReleaseWorker(ctx, e.TaskManager); err != nil && !errors.Is(err, drivers.ErrUnknownWorker) {
			a.log.Warn("release failed", "taskmanager", e.TaskManager, "err", err)
		}
	}()
}

func (a *AM) requestWorkers(n int) {
	driver := a.driver
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := 0; i < n; i++ {
			id, err := driver.RequestWorker(ctx, drivers.WorkerSpec{})
			switch {
			case errors.Is(err, drivers.ErrPassive):
				a.log.Info("waiting for TaskManagers to be started (passive driver)", "driver", driver.Name(), "wanted", n)
				return
			case err != nil:
				a.post(func() { a.step(core.WorkerRequestFailed{Reason: err.Error()}) })
			default:
				a.log.Info("requested worker", "taskmanager", id)
			}
		}
	}()
}

// dropConnection ends a standalone TaskManager's session without telling it to exit (the
// core has forgotten it already): the process stays, reconnects and registers again, as a
// Flink TaskManager does after losing its JobManager (loop goroutine).
func (a *AM) dropConnection(e core.ReleaseTaskManager) {
	s, ok := a.sessions[e.TaskManager]
	if !ok {
		return
	}
	a.log.Warn("dropping the connection of a TaskManager; its process stays and may register again",
		"taskmanager", e.TaskManager, "reason", e.Reason)
	delete(a.sessions, e.TaskManager)
	a.view.taskManagerLeft(e.TaskManager)
	if sd, ok := a.driver.(interface{ Forget(core.TaskManagerID) }); ok {
		sd.Forget(e.TaskManager)
	}
	s.close(fmt.Errorf("TaskManager %s: connection dropped: %s", e.TaskManager, e.Reason))
}
