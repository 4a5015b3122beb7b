package am

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidestream/tide/core"
)

// restoreState takes over the AM state an earlier attempt of the job persisted (before
// the loop starts, after the scheduler exists). A damaged file is reported and the job
// goes on without it; a storage that cannot be read fails the start, as checkpoint
// recovery does, so the cluster retries rather than the job silently forgetting an
// operator's blocklist.
func (a *AM) restoreState(ctx context.Context) error {
	a.stateDirty = true // the first attempt records its start time at once
	if a.amState == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, ok, err := a.amState.load(ctx, a.cfg.JobID)
	switch {
	case errors.Is(err, ErrAMState):
		a.log.Error("persisted AM state is damaged; going on without the blocklist and histories it held", "err", err)
		return nil
	case err != nil:
		return fmt.Errorf("recover job %s: %w", a.cfg.JobID, err)
	case !ok:
		return nil
	}
	now := a.clock.Now()
	restored := core.Restored{Blocked: s.Blocklist, Rescales: s.Rescales, Exceptions: s.Exceptions}
	if d := s.Deployment; d != nil {
		// Kept in the persisted state until this AM decides: a failover during the wait
		// for the reports can still adopt.
		a.recovered, a.deployRecord = d, d
		restored.Deployment = &core.RecoveredDeployment{Job: a.cfg.JobID, Run: d.Run, Attempt: d.Attempt, Parallelism: d.Parallelism, Placement: d.Placement}
	}
	skipped := a.sched.Restore(now, restored)
	for _, n := range skipped {
		a.log.Info("persisted blocked node not restored (expired or invalid)", "node", n.ID, "end", n.End, "cause", n.Cause)
	}
	a.ckpt.co.RestoreStats(now, s.Checkpoints, "the AM failed over while the checkpoint was in progress")
	a.ckpt.recoverSavepoints(ctx, s.Savepoints, s.Deployment != nil)
	a.view.restore(s.StartTime, a.sched.RescaleHistory())
	a.view.setCheckpoints(a.ckpt.co.Stats())
	blocked := a.sched.Blocklist()
	a.view.setBlocked(blocked)
	nodes := make([]core.NodeID, 0, len(blocked))
	for _, b := range blocked {
		nodes = append(nodes, core.NodeID(b.ID))
	}
	a.blocked.set(nodes)
	a.persisted.exception, a.persisted.hasException = a.sched.LatestException()
	a.log.Info("AM state of the previous attempt restored", "path", a.amState.uri(), "startTime", s.StartTime,
		"blockedNodes", len(blocked), "rescales", len(s.Rescales), "exceptions", len(s.Exceptions),
		"checkpointsCompleted", s.Checkpoints.Counts.Completed)
	return nil
}

// persistState hands the AM state to the writer if it changed since the last time and
// returns the version that covers the current state (loop goroutine). The loop calls it
// after every event; whoever must wait for durability calls it directly.
func (a *AM) persistState() uint64 {
	if a.amState == nil {
		return 0
	}
	if e, ok := a.sched.LatestException(); ok != a.persisted.hasException || e != a.persisted.exception {
		a.persisted.exception, a.persisted.hasException = e, ok
		a.stateDirty = true
	}
	if a.stateDirty {
		a.stateDirty = false
		a.persisted.version = a.amState.save(amState{
			JobID: a.cfg.JobID, StartTime: a.view.startTime(), Blocklist: a.sched.Blocklist(),
			Rescales: a.sched.RescaleHistory(), Exceptions: a.sched.Exceptions(), Checkpoints: a.ckpt.co.Stats(),
			Deployment: a.deployRecord, Savepoints: a.ckpt.persistedSavepoints(),
		})
	}
	return a.persisted.version
}

// noteStateEffect marks the AM state dirty when an effect of the core changed it.
func (a *AM) noteStateEffect(eff core.Effect) {
	switch eff.(type) {
	case core.BlocklistChanged, core.RescaleRecorded:
		a.stateDirty = true
	}
}

// waitStateDurable waits until version v of the AM state is durable (REST handlers).
func (a *AM) waitStateDurable(ctx context.Context, v uint64) error {
	ctx, cancel := context.WithTimeout(ctx, amStateWriteTimeout)
	defer cancel()
	return a.amState.wait(ctx, v)
}

// startStateWriter starts the writer; the returned func stops it after a last flush and
// waits (bounded) for it.
func (a *AM) startStateWriter() func() {
	if a.amState == nil {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); a.amState.run(stop) }()
	return func() {
		close(stop)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			a.log.Warn("AM state writer still busy at shutdown", "path", a.amState.uri())
		}
	}
}

// restore sets what an earlier attempt persisted.
func (v *view) restore(start time.Time, rescales []core.Rescale) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.start = start
	v.rescales = append([]core.Rescale(nil), rescales...)
}

func (v *view) startTime() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.start
}
