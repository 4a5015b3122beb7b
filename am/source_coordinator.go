package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"sort"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
)

// sourceCoordinator hosts the split enumerators of the job's sources (FLIP-27). Every
// attempt gets fresh enumerators restored from the checkpoint the attempt restores
// (a global restore: splits handed out after that checkpoint are back in the restored
// enumerator state or in the restored readers' state, never lost or doubled). It runs
// on the loop goroutine.
//
// With checkpoint storage, every registration, assignment, no-more-splits, coordinator
// snapshot and reader reset is also recorded by a core/source Tracker per source and
// written to that source's split-assignment log (split_log.go) before the reader hears
// of it; the log is compacted at each completed checkpoint, and a new AM process replays
// it (open), so it knows which splits were handed to which reader since the last
// checkpoint.
type sourceCoordinator struct {
	log     *slog.Logger
	sources map[core.VertexID]stream.SplitSource

	attempt core.AttemptID
	enums   map[core.VertexID]stream.SplitEnumerator
	readers map[core.VertexID]int // each source's parallelism in the attempt
	// waiting are readers whose last request got nothing yet (splits may come later).
	waiting map[core.SubtaskID]bool
	cancel  context.CancelFunc

	trackers map[core.VertexID]*source.Tracker
	// wal persists the trackers' entries; nil without checkpoint storage.
	wal *splitLogStore
	// logs are each source's log since its last compaction, as written.
	logs map[core.VertexID][]byte
	// unsent counts split events waiting for their log write to be durable; no
	// checkpoint is triggered meanwhile (the events must reach the readers before the
	// barrier of the checkpoint whose cut they belong to).
	unsent int
	// retries are the logs waiting to be written again (source_coordinator_retry.go);
	// after runs a function on the loop after a delay.
	retries map[core.VertexID]*logRetry
	after   func(time.Duration, func())
}

func newSourceCoordinator(job *stream.Job, log *slog.Logger) *sourceCoordinator {
	sc := &sourceCoordinator{log: log, sources: map[core.VertexID]stream.SplitSource{},
		trackers: map[core.VertexID]*source.Tracker{}, logs: map[core.VertexID][]byte{}, retries: map[core.VertexID]*logRetry{}}
	for _, s := range job.Sources() {
		v := core.VertexID(s.Vertex)
		sc.sources[v] = s.Source
		sc.trackers[v] = source.NewTracker()
	}
	return sc
}

// open replays the split-assignment logs a previous AM left in st under jobID (before
// the loop starts) and writes from now on through post, retrying failed writes through
// after (which runs a function on the loop after a delay). A log that cannot be replayed
// is kept aside and reported; that source starts a fresh log, which loses nothing: the
// attempt restores every reader and enumerator from the same checkpoint.
func (sc *sourceCoordinator) open(ctx context.Context, st storage.Storage, jobID string, post func(func()) bool, after func(time.Duration, func())) {
	if st == nil {
		return
	}
	sc.after = after
	sc.wal = newSplitLogStore(st, jobID, sc.log, post)
	for _, v := range sc.vertices() {
		t, truncated, err := sc.wal.read(ctx, v)
		if err != nil {
			sc.log.Error("split assignment log not replayed; starting a fresh one", "source", v, "err", err)
			continue
		}
		if truncated {
			sc.log.Warn("split assignment log ended in a partial entry (a crash mid-write); dropped it", "source", v)
		}
		sc.trackers[v] = t
		if t.Seq() > 0 {
			n := 0
			for _, a := range t.Uncheckpointed() {
				n += len(a.Splits)
			}
			sc.log.Info("split assignment log replayed", "source", v, "seq", t.Seq(), "readers", len(t.Readers()),
				"uncheckpointedSplits", n, "lastCompletedCheckpoint", t.LastCompleted(),
				"path", st.URI()+"/"+splitLogName(jobID, v))
		}
	}
}

func (sc *sourceCoordinator) vertices() []core.VertexID {
	vertices := make([]core.VertexID, 0, len(sc.sources))
	for v := range sc.sources {
		vertices = append(vertices, v)
	}
	sort.Slice(vertices, func(i, j int) bool { return vertices[i] < vertices[j] })
	return vertices
}

// reset builds the enumerators of a new attempt from restored (vertex → state; nil or
// missing means fresh), the coordinator state of checkpoint restoreFrom (0: none). Every
// reader restarts from restoreFrom too, so each tracker resets every subtask it knows to
// that checkpoint: the splits it had handed out since are pending again in the restored
// enumerator state, so they are not added back (that would hand them out twice).
func (sc *sourceCoordinator) reset(attempt core.AttemptID, parallelism map[core.VertexID]int, restored map[string][]byte, restoreFrom core.CheckpointID) error {
	sc.close()
	sc.releaseEndedWaiters()
	ctx, cancel := context.WithCancel(context.Background())
	sc.attempt, sc.cancel = attempt, cancel
	sc.enums = map[core.VertexID]stream.SplitEnumerator{}
	sc.readers = maps.Clone(parallelism)
	sc.waiting = map[core.SubtaskID]bool{}
	cp := int64(restoreFrom)
	if cp < 1 {
		cp = source.NoCheckpoint
	}
	for _, v := range sc.vertices() {
		t := sc.trackers[v]
		subtasks := map[int]bool{}
		for _, r := range t.Readers() {
			subtasks[r.Subtask] = true
		}
		for _, a := range t.Uncheckpointed() {
			subtasks[a.Subtask] = true
		}
		for s := range subtasks {
			if back := t.ReaderReset(s, cp); len(back) > 0 {
				sc.log.Info("reader restarts from the checkpoint; the splits it got since are pending in the restored enumerator",
					"source", v, "subtask", s, "checkpoint", restoreFrom, "splits", len(back), "attempt", attempt)
			}
		}
		sc.compact(v)
	}
	for _, v := range sc.vertices() {
		p, ok := parallelism[v]
		if !ok {
			return fmt.Errorf("source vertex %s has no parallelism in attempt %d", v, attempt)
		}
		enum, err := sc.sources[v].CreateEnumerator(restored[string(v)], p)
		if err != nil {
			return fmt.Errorf("create split enumerator of source %s (parallelism %d, restored %d bytes): %w", v, p, len(restored[string(v)]), err)
		}
		if err := enum.Start(ctx); err != nil {
			return fmt.Errorf("start split enumerator of source %s: %w", v, err)
		}
		sc.enums[v] = enum
	}
	return nil
}

// request answers a reader's split request; ahead: the reader still has a split to read.
// ok is false for a stale or unknown request. What it records goes to the log with the
// next persist.
func (sc *sourceCoordinator) request(attempt core.AttemptID, v core.VertexID, index int, ahead bool) (splits []stream.Split, noMore, ok bool, err error) {
	enum, found := sc.enums[v]
	if attempt != sc.attempt || !found {
		return nil, false, false, nil
	}
	t := sc.trackers[v]
	if t.HasNoMoreSplits(index) {
		return nil, true, true, nil
	}
	if !t.IsRegistered(index) {
		if _, err := t.RegisterReader(index, int64(attempt)); err != nil {
			return nil, false, false, fmt.Errorf("source %s: %w", v, err)
		}
		enum.AddReader(index)
	}
	if ahead && sc.keepsForIdle(v, enum) {
		return nil, false, true, nil
	}
	splits, noMore = enum.HandleSplitRequest(index)
	if len(splits) > 0 {
		ss := make([]source.Split, len(splits))
		for i, sp := range splits {
			ss[i] = source.Split{ID: sp.ID, Data: sp.Data}
		}
		if err := t.Assign(source.Assignment{Subtask: index, Splits: ss}); err != nil {
			return nil, false, false, fmt.Errorf("source %s: %w", v, err)
		}
	}
	if noMore {
		t.SignalNoMoreSplits(index)
	}
	sub := core.SubtaskID{Vertex: v, Index: index}
	if len(splits) == 0 && !noMore && !ahead {
		sc.waiting[sub] = true
	} else {
		delete(sc.waiting, sub)
	}
	return splits, noMore, true, nil
}

// splitsLeft is an enumerator that knows how many splits it has not assigned yet
// (stream.QueueEnumerator).
type splitsLeft interface{ Remaining() int }

// keepsForIdle says whether a request made ahead gets nothing now: a source's last
// splits, as many as its other readers, are kept for readers with nothing to read. Without
// it, the reader that starts first takes the split a reader starting a moment later would
// read (two ranges of one file, both read by the first reader), and at the end a reader
// holds a split ahead while another idles. An enumerator that does not count its splits
// is always asked.
func (sc *sourceCoordinator) keepsForIdle(v core.VertexID, enum stream.SplitEnumerator) bool {
	left, ok := enum.(splitsLeft)
	if !ok {
		return false
	}
	n := left.Remaining()
	return n > 0 && n < sc.readers[v] // none left: the enumerator says "no more"
}

// persist writes what v's tracker recorded since the last persist to its log; done (if
// not nil) runs on the loop once that is durable. A write the storage does not take is
// retried until it is (source_coordinator_retry.go): done hears an error only when its
// attempt ended first (errAttemptEnded) or the log does not encode (a bug). Without
// storage done runs at once.
func (sc *sourceCoordinator) persist(v core.VertexID, done func(error)) {
	t := sc.trackers[v]
	entries := t.TakeLog()
	if sc.wal == nil {
		if done != nil {
			done(nil)
		}
		return
	}
	if len(entries) == 0 && done == nil {
		return
	}
	buf, err := encodeEntries(sc.logs[v], entries)
	if err != nil {
		// Entries come from the tracker, which validates its input: a bug.
		err = fmt.Errorf("encode split assignment log of source %s: %w", v, err)
		sc.log.Error("split assignment log", "source", v, "err", err)
		if done != nil {
			done(err)
		}
		return
	}
	sc.logs[v] = buf
	var waiters []logWaiter
	if done != nil {
		sc.unsent++
		waiters = []logWaiter{{attempt: sc.attempt, done: func(err error) { sc.unsent--; done(err) }}}
	}
	sc.writeLog(v, waiters)
}

// compact replaces v's log with one entry holding its tracker's whole state.
func (sc *sourceCoordinator) compact(v core.VertexID) {
	t := sc.trackers[v]
	t.TakeLog()
	if sc.wal == nil {
		return
	}
	sc.logs[v] = nil
	buf, err := encodeEntries(nil, []source.Entry{t.Compact()})
	if err != nil {
		sc.log.Error("compact split assignment log", "source", v, "err", err)
		return
	}
	sc.logs[v] = buf
	sc.writeLog(v, nil)
}

// snapshot returns the state of every enumerator, by vertex, and seals each tracker's
// assignments under checkpointID.
func (sc *sourceCoordinator) snapshot(checkpointID int64) (map[string][]byte, error) {
	out := make(map[string][]byte, len(sc.enums))
	for _, v := range sc.vertices() {
		enum, ok := sc.enums[v]
		if !ok {
			continue
		}
		b, err := enum.SnapshotState(checkpointID)
		if err != nil {
			return nil, fmt.Errorf("snapshot split enumerator of source %s for checkpoint %d: %w", v, checkpointID, err)
		}
		out[string(v)] = b
	}
	for _, v := range sc.vertices() {
		if err := sc.trackers[v].SnapshotState(checkpointID); err != nil {
			// A snapshot a killed AM logged for an id it never used: the next id is free.
			return nil, fmt.Errorf("split assignments of source %s: %w", v, err)
		}
		sc.persist(v, nil)
	}
	return out, nil
}

// notifyComplete tells the enumerators and compacts every log: the assignments sealed by
// checkpointID and before are in the readers' checkpointed state now.
func (sc *sourceCoordinator) notifyComplete(checkpointID int64) {
	for _, v := range sc.vertices() {
		if enum, ok := sc.enums[v]; ok {
			enum.NotifyCheckpointComplete(checkpointID)
		}
		sc.trackers[v].OnCheckpointComplete(checkpointID)
		sc.compact(v)
	}
}

// close stops the enumerators of the current attempt.
func (sc *sourceCoordinator) close() {
	if sc.cancel != nil {
		sc.cancel()
		sc.cancel = nil
	}
}

// stop closes the enumerators and the log writer (the AM is stopping).
func (sc *sourceCoordinator) stop() {
	sc.close()
	if sc.wal != nil {
		sc.wal.close()
	}
}

// removeLogs deletes the split-assignment logs (the job ended; no attempt resumes it).
// Call after stop.
func (sc *sourceCoordinator) removeLogs(ctx context.Context) error {
	if sc.wal == nil {
		return nil
	}
	dir := path.Join(sc.wal.jobID, splitLogDir)
	if err := sc.wal.st.Delete(ctx, dir); err != nil {
		return fmt.Errorf("delete %s/%s: %w", sc.wal.st.URI(), dir, err)
	}
	return nil
}

// splitRequest serves a reader's SplitRequest (loop goroutine). The answer goes out only
// once the split-assignment log holds it.
func (a *AM) splitRequest(s *session, attempt core.AttemptID, v core.VertexID, index int, ahead bool) {
	splits, noMore, ok, err := a.src.request(attempt, v, index, ahead)
	if err != nil {
		a.log.Error("source coordinator failed; failing the job over", "attempt", attempt, "source", v, "subtask", index, "err", err)
		a.step(core.GlobalFailure{Error: err.Error()})
		return
	}
	if !ok {
		return
	}
	if len(splits) == 0 && !noMore && ahead {
		// Nothing now: the reader, which still has a split to read, asks again once it
		// runs out.
		a.src.persist(v, nil)
		s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_SplitAssignment{SplitAssignment: &rpc.SplitAssignment{
			Attempt: int64(attempt), Vertex: string(v), Index: int32(index)}}})
		return
	}
	if len(splits) == 0 && !noMore {
		a.src.persist(v, nil)
		// Nothing yet: ask the enumerator again shortly on the reader's behalf.
		a.clock.AfterFunc(retrySplitRequest, func() {
			a.post(func() {
				if cur, ok := a.sessions[s.id]; ok && cur == s && a.src.waiting[core.SubtaskID{Vertex: v, Index: index}] {
					a.splitRequest(s, attempt, v, index, false)
				}
			})
		})
		return
	}
	out := make([]*rpc.Split, 0, len(splits))
	for _, sp := range splits {
		out = append(out, &rpc.Split{Id: sp.ID, Data: sp.Data})
	}
	msg := &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_SplitAssignment{SplitAssignment: &rpc.SplitAssignment{
		Attempt: int64(attempt), Vertex: string(v), Index: int32(index), Splits: out, NoMoreSplits: noMore}}}
	a.src.persist(v, func(err error) {
		if err == nil {
			if cur, ok := a.sessions[s.id]; ok && cur == s && a.src.attempt == attempt {
				s.send(msg)
			}
			return
		}
		if errors.Is(err, errAttemptEnded) || a.src.attempt != attempt {
			return // the attempt ended: the restored enumerator has these splits again
		}
		// Storage failures are retried (the reader waits); this is a log that does not
		// encode, a bug.
		a.log.Error("split assignment not logged; failing the job over", "attempt", attempt, "source", v, "subtask", index, "err", err)
		a.step(core.GlobalFailure{Error: err.Error()})
	})
}

// retrySplitRequest is how often a reader's unanswered split request is retried.
const retrySplitRequest = 100 * time.Millisecond
