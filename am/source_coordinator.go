package am

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/stream"
)

// sourceCoordinator hosts the split enumerators of the job's sources (FLIP-27). Every
// attempt gets fresh enumerators restored from the checkpoint the attempt restores
// (a global restore: splits handed out after that checkpoint are back in the restored
// enumerator state or in the restored readers' state, never lost or doubled). It runs
// on the loop goroutine.
type sourceCoordinator struct {
	log     *slog.Logger
	sources map[core.VertexID]stream.SplitSource

	attempt core.AttemptID
	enums   map[core.VertexID]stream.SplitEnumerator
	readers map[core.VertexID]map[int]bool
	noMore  map[core.VertexID]map[int]bool
	// waiting are readers whose last request got nothing yet (splits may come later).
	waiting map[core.SubtaskID]bool
	cancel  context.CancelFunc
}

func newSourceCoordinator(job *stream.Job, log *slog.Logger) *sourceCoordinator {
	sc := &sourceCoordinator{log: log, sources: map[core.VertexID]stream.SplitSource{}}
	for _, s := range job.Sources() {
		sc.sources[core.VertexID(s.Vertex)] = s.Source
	}
	return sc
}

// reset builds the enumerators of a new attempt from restored (vertex → state; nil or
// missing means fresh).
func (sc *sourceCoordinator) reset(attempt core.AttemptID, parallelism map[core.VertexID]int, restored map[string][]byte) error {
	sc.close()
	ctx, cancel := context.WithCancel(context.Background())
	sc.attempt, sc.cancel = attempt, cancel
	sc.enums = map[core.VertexID]stream.SplitEnumerator{}
	sc.readers = map[core.VertexID]map[int]bool{}
	sc.noMore = map[core.VertexID]map[int]bool{}
	sc.waiting = map[core.SubtaskID]bool{}
	vertices := make([]core.VertexID, 0, len(sc.sources))
	for v := range sc.sources {
		vertices = append(vertices, v)
	}
	sort.Slice(vertices, func(i, j int) bool { return vertices[i] < vertices[j] })
	for _, v := range vertices {
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
		sc.readers[v] = map[int]bool{}
		sc.noMore[v] = map[int]bool{}
	}
	return nil
}

// request answers a reader's split request. ok is false for a stale or unknown request.
func (sc *sourceCoordinator) request(attempt core.AttemptID, v core.VertexID, index int) (splits []stream.Split, noMore, ok bool) {
	enum, found := sc.enums[v]
	if attempt != sc.attempt || !found {
		return nil, false, false
	}
	if sc.noMore[v][index] {
		return nil, true, true
	}
	if !sc.readers[v][index] {
		sc.readers[v][index] = true
		enum.AddReader(index)
	}
	splits, noMore = enum.HandleSplitRequest(index)
	if noMore {
		sc.noMore[v][index] = true
	}
	sub := core.SubtaskID{Vertex: v, Index: index}
	if len(splits) == 0 && !noMore {
		sc.waiting[sub] = true
	} else {
		delete(sc.waiting, sub)
	}
	return splits, noMore, true
}

// snapshot returns the state of every enumerator, by vertex.
func (sc *sourceCoordinator) snapshot(checkpointID int64) (map[string][]byte, error) {
	out := make(map[string][]byte, len(sc.enums))
	for v, enum := range sc.enums {
		b, err := enum.SnapshotState(checkpointID)
		if err != nil {
			return nil, fmt.Errorf("snapshot split enumerator of source %s for checkpoint %d: %w", v, checkpointID, err)
		}
		out[string(v)] = b
	}
	return out, nil
}

func (sc *sourceCoordinator) notifyComplete(checkpointID int64) {
	for _, enum := range sc.enums {
		enum.NotifyCheckpointComplete(checkpointID)
	}
}

func (sc *sourceCoordinator) close() {
	if sc.cancel != nil {
		sc.cancel()
		sc.cancel = nil
	}
}

// splitRequest serves a reader's SplitRequest (loop goroutine).
func (a *AM) splitRequest(s *session, attempt core.AttemptID, v core.VertexID, index int) {
	splits, noMore, ok := a.src.request(attempt, v, index)
	if !ok {
		return
	}
	if len(splits) == 0 && !noMore {
		// Nothing yet: ask the enumerator again shortly on the reader's behalf.
		a.clock.AfterFunc(retrySplitRequest, func() {
			a.post(func() {
				if cur, ok := a.sessions[s.id]; ok && cur == s && a.src.waiting[core.SubtaskID{Vertex: v, Index: index}] {
					a.splitRequest(s, attempt, v, index)
				}
			})
		})
		return
	}
	out := make([]*rpc.Split, 0, len(splits))
	for _, sp := range splits {
		out = append(out, &rpc.Split{Id: sp.ID, Data: sp.Data})
	}
	s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_SplitAssignment{SplitAssignment: &rpc.SplitAssignment{
		Attempt: int64(attempt), Vertex: string(v), Index: int32(index), Splits: out, NoMoreSplits: noMore}}})
}

// retrySplitRequest is how often a reader's unanswered split request is retried.
const retrySplitRequest = 100 * time.Millisecond
