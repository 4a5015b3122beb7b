package am

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/keygroups"
	"github.com/tidestream/tide/rpc"
)

// warmups carries out the core's warm-up and standby effects (issue 14): it sends each
// TaskManager its ranges of a round, with the key-group ranges of the subtasks that wrote
// the checkpoint so the TaskManager fetches only the files that overlap, and turns the
// TaskManagers' progress into core events. It also measures each rescale's switch
// downtime (from the start of the switch until every subtask of the new attempt runs).
// Loop goroutine only.
type warmups struct {
	// ranges: the key-group placement of the last attempts, by attempt
	ranges map[core.AttemptID]map[core.VertexID]keygroups.Assignment
	// writer: the attempt that completed each recent checkpoint
	writer map[core.CheckpointID]core.AttemptID
	// sent: the TaskManagers that got each round still going
	sent map[int]map[core.TaskManagerID]bool
	// awaitRunning: the rescale whose switch downtime ends when its attempt runs;
	// downtime: the switch downtime of recent rescales, by id
	awaitRunning map[core.AttemptID]core.Rescale
	downtime     map[int]time.Duration
	// restoreBytes: what each subtask of recent attempts downloaded from checkpoint
	// storage, and read from local state, to restore (from the TaskManagers' task metrics)
	restoreBytes map[core.AttemptID]map[core.SubtaskID]restoreBytes
}

// restoreBytes is what one subtask's restore read locally and downloaded.
type restoreBytes struct{ local, downloaded int64 }

// keepAttempts bounds the attempts and checkpoints remembered.
const keepAttempts = 8

func newWarmups() *warmups {
	return &warmups{ranges: map[core.AttemptID]map[core.VertexID]keygroups.Assignment{},
		writer: map[core.CheckpointID]core.AttemptID{}, sent: map[int]map[core.TaskManagerID]bool{},
		awaitRunning: map[core.AttemptID]core.Rescale{}, downtime: map[int]time.Duration{},
		restoreBytes: map[core.AttemptID]map[core.SubtaskID]restoreBytes{}}
}

// restored records what the subtasks of a TaskManager's metrics report restored from
// where (loop goroutine).
func (w *warmups) restored(m *rpc.TaskMetrics) {
	for _, st := range m.GetSubtasks() {
		local, down := st.GetRestoreLocalBytes(), st.GetRestoreDownloadedBytes()
		if local == 0 && down == 0 {
			continue
		}
		a := core.AttemptID(st.GetAttempt())
		per := w.restoreBytes[a]
		if per == nil {
			per = map[core.SubtaskID]restoreBytes{}
			w.restoreBytes[a] = per
			for old := range w.restoreBytes {
				if old+keepAttempts < a {
					delete(w.restoreBytes, old)
				}
			}
		}
		per[core.SubtaskID{Vertex: core.VertexID(st.GetVertex()), Index: int(st.GetIndex())}] = restoreBytes{local: local, downloaded: down}
	}
}

// restoreTotals sums what the subtasks of attempt restored locally and downloaded (so far
// reported: each TaskManager reports every second).
func (w *warmups) restoreTotals(a core.AttemptID) restoreBytes {
	var t restoreBytes
	for _, b := range w.restoreBytes[a] {
		t.local += b.local
		t.downloaded += b.downloaded
	}
	return t
}

// deployed remembers an attempt's key-group placement.
func (w *warmups) deployed(e core.Deploy) {
	m := make(map[core.VertexID]keygroups.Assignment, len(e.Vertices))
	for _, v := range e.Vertices {
		m[v.Vertex] = v.KeyGroups
	}
	w.ranges[e.Attempt] = m
	for a := range w.ranges {
		if a+keepAttempts < e.Attempt {
			delete(w.ranges, a)
		}
	}
}

// checkpointCompleted remembers which attempt wrote a checkpoint.
func (w *warmups) checkpointCompleted(c core.CheckpointCompleted) {
	w.writer[c.Checkpoint] = c.Attempt
	for id := range w.writer {
		if id+keepAttempts < c.Checkpoint {
			delete(w.writer, id)
		}
	}
}

// request builds the message of one TaskManager's part of a round.
func (w *warmups) request(e core.WarmUp, tasks []core.WarmupTask) *rpc.JobManagerMessage {
	req := &rpc.WarmupRequest{Round: int64(e.Round), Kind: string(e.Kind), CheckpointId: int64(e.Checkpoint)}
	attempt, known := w.writer[e.Checkpoint]
	for _, t := range tasks {
		r := &rpc.WarmupRange{Vertex: string(t.Vertex), Subtask: int32(t.Subtask), MaxParallelism: int32(t.MaxParallelism),
			KeyGroupStart: int32(t.KeyGroups.Start), KeyGroupEnd: int32(t.KeyGroups.End)}
		if src, ok := w.ranges[attempt][t.Vertex]; known && ok && len(src) > 0 {
			r.SourceAttempt = int64(attempt)
			for i, sr := range src {
				r.Sources = append(r.Sources, &rpc.WarmupSourceRange{Subtask: int32(i), KeyGroupStart: int32(sr.Start), KeyGroupEnd: int32(sr.End)})
			}
		}
		req.Ranges = append(req.Ranges, r)
	}
	return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Warmup{Warmup: req}}
}

// warmUp sends every TaskManager of a round its ranges (loop goroutine).
func (a *AM) warmUp(e core.WarmUp) {
	perTM := map[core.TaskManagerID][]core.WarmupTask{}
	for _, t := range e.Tasks {
		perTM[t.TaskManager] = append(perTM[t.TaskManager], t)
	}
	sent := a.warm.sent[e.Round]
	if sent == nil {
		sent = map[core.TaskManagerID]bool{}
		a.warm.sent[e.Round] = sent
	}
	for _, tm := range slices.Sorted(maps.Keys(perTM)) {
		s, ok := a.sessions[tm]
		if !ok {
			// Gone already: its loss reaches the core, which re-plans.
			continue
		}
		if !sent[tm] {
			a.log.Info("warm-up requested", "round", e.Round, "kind", e.Kind, "taskmanager", tm, "ranges", len(perTM[tm]), "checkpoint", e.Checkpoint)
		}
		sent[tm] = true
		s.send(a.warm.request(e, perTM[tm]))
	}
}

// stopWarmup tells the TaskManagers of a round to stop following checkpoints.
func (a *AM) stopWarmup(e core.StopWarmup) {
	a.log.Info("warm-up round ended", "round", e.Round, "reason", e.Reason)
	msg := &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_WarmupStop{WarmupStop: &rpc.WarmupStop{Round: int64(e.Round), Reason: e.Reason}}}
	for tm := range a.warm.sent[e.Round] {
		if s, ok := a.sessions[tm]; ok {
			s.send(msg)
		}
	}
	delete(a.warm.sent, e.Round)
}

// warmupProgress turns a TaskManager's report into a core event.
func (a *AM) warmupProgress(s *session, p *rpc.WarmupProgress) {
	a.step(core.WarmupReported{Round: int(p.GetRound()), TaskManager: s.id, Vertex: core.VertexID(p.GetVertex()),
		KeyGroups:  keygroups.Range{Start: int(p.GetKeyGroupStart()), End: int(p.GetKeyGroupEnd())},
		Checkpoint: core.CheckpointID(p.GetCheckpointId()), Bytes: p.GetBytes(), Error: p.GetError()})
}

// rescaleRecorded starts waiting for the rescale's attempt to run, for its switch downtime.
func (a *AM) rescaleRecorded(r core.Rescale) {
	if r.Outcome == core.RescaleCompleted && r.Attempt > 0 {
		a.warm.awaitRunning[r.Attempt] = r
	}
}

// noteRunning records the switch downtime of the rescale that deployed d once every
// subtask of d runs (or has finished).
func (a *AM) noteRunning(d *deployment) {
	r, ok := a.warm.awaitRunning[d.attempt]
	if !ok {
		return
	}
	for _, st := range d.states {
		if st != core.TaskRunning && st != core.TaskFinished {
			return
		}
	}
	delete(a.warm.awaitRunning, d.attempt)
	for at := range a.warm.awaitRunning {
		if at < d.attempt {
			delete(a.warm.awaitRunning, at)
		}
	}
	dt := switchDowntime(r, a.clock.Now())
	a.warm.downtime[r.ID] = dt
	for id := range a.warm.downtime {
		if id+rescaleDowntimesKept < r.ID {
			delete(a.warm.downtime, id)
		}
	}
	a.log.Info("rescale switch done: every subtask runs", "rescale", r.ID, "attempt", r.Attempt, "switch_downtime", dt)
}

// rescaleDowntimesKept bounds the switch downtimes remembered (the history is shorter).
const rescaleDowntimesKept = 256

// switchDowntime is how long a rescale kept the job from running: from its start (the
// switch, after any warm-up) until every subtask of its attempt ran.
func switchDowntime(r core.Rescale, running time.Time) time.Duration {
	if running.Before(r.Start) {
		return 0
	}
	return running.Sub(r.Start)
}

// warnFullCopies says, once at start, when warm-up or standby copies will fetch a range's
// whole state at every checkpoint they follow. A copy follows a checkpoint by fetching the
// files it does not hold yet; only pebble with incremental checkpoints keeps files from one
// checkpoint to the next (shared tables). With the hashmap backend, or full pebble
// checkpoints, every checkpoint's files are new and each one is downloaded again in full.
// (Heap copies are not made incremental: the heap snapshot writes each key group's entries
// in map order with no per-key-group digest, so a copy cannot tell an unchanged key group
// from a changed one without reading both.)
func warnFullCopies(o core.Options, flat map[string]string, log *slog.Logger) {
	if o.NumStandbyReplicas <= 0 && o.WarmupTimeout <= 0 {
		return
	}
	backend := strings.ToLower(strings.TrimSpace(flat["state.backend.type"]))
	incremental := strings.EqualFold(strings.TrimSpace(flat["execution.checkpointing.incremental"]), "true")
	if (backend == "pebble" || backend == "rocksdb") && incremental {
		return
	}
	if backend == "" {
		backend = "hashmap"
	}
	log.Warn("warm-up and standby copies download their ranges' whole state at every checkpoint they follow: only state.backend.type pebble with execution.checkpointing.incremental true shares files between checkpoints",
		"state.backend.type", backend, "execution.checkpointing.incremental", incremental,
		"num.standby.replicas", o.NumStandbyReplicas, "state.warmup.timeout", o.WarmupTimeout)
}
