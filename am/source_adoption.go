package am

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/stream"
)

// adopt rebuilds the enumerators for an attempt adopted after an AM failover: its readers
// keep the splits they hold, so each enumerator is restored from the coordinator state of
// checkpoint latest and then hands out again, reader by reader, exactly the splits the
// split-assignment log says were assigned after that checkpoint (those are held by the
// running readers, not pending). received names, per source subtask, the splits its
// reader reported having received since its last completed checkpoint; the logged splits
// it never received (the lost AM logged them and died before sending) are returned, to be
// sent to it. An enumerator that does not hand out the logged splits again cannot be
// rebuilt without a restore: the error says so.
func (sc *sourceCoordinator) adopt(attempt core.AttemptID, parallelism map[core.VertexID]int, restored map[string][]byte,
	latest core.CheckpointID, received map[core.SubtaskID][]string) (resend map[core.SubtaskID][]stream.Split, err error) {
	sc.close()
	ctx, cancel := context.WithCancel(context.Background())
	sc.attempt, sc.cancel = attempt, cancel
	sc.enums = map[core.VertexID]stream.SplitEnumerator{}
	sc.readers = maps.Clone(parallelism)
	sc.waiting = map[core.SubtaskID]bool{}
	resend = map[core.SubtaskID][]stream.Split{}
	for _, v := range sc.vertices() {
		p, ok := parallelism[v]
		if !ok {
			return nil, fmt.Errorf("source vertex %s has no parallelism in adopted attempt %d", v, attempt)
		}
		t := sc.trackers[v]
		if latest > 0 && int64(latest) > t.LastCompleted() {
			// The lost AM completed checkpoint latest but did not log it: its assignments
			// are in the readers' checkpointed state.
			t.OnCheckpointComplete(int64(latest))
		}
		enum, err := sc.sources[v].CreateEnumerator(restored[string(v)], p)
		if err != nil {
			return nil, fmt.Errorf("create split enumerator of source %s (parallelism %d, restored %d bytes): %w", v, p, len(restored[string(v)]), err)
		}
		if err := enum.Start(ctx); err != nil {
			return nil, fmt.Errorf("start split enumerator of source %s: %w", v, err)
		}
		for _, r := range t.Readers() {
			if r.Subtask < p {
				enum.AddReader(r.Subtask)
			}
		}
		logged := t.Uncheckpointed()
		var want, got []string
		for _, as := range logged {
			if as.Subtask >= p {
				return nil, fmt.Errorf("source %s: the split-assignment log assigns splits to subtask %d, the adopted parallelism is %d", v, as.Subtask, p)
			}
			n := len(as.Splits)
			for _, s := range as.Splits {
				want = append(want, s.ID)
			}
			for n > 0 {
				splits, _ := enum.HandleSplitRequest(as.Subtask)
				if len(splits) == 0 {
					break
				}
				for _, s := range splits {
					got = append(got, s.ID)
				}
				n -= len(splits)
			}
			sub := core.SubtaskID{Vertex: v, Index: as.Subtask}
			have := received[sub]
			for _, s := range as.Splits {
				if !slices.Contains(have, s.ID) {
					resend[sub] = append(resend[sub], stream.Split{ID: s.ID, Data: s.Data})
				}
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			return nil, fmt.Errorf("source %s: the enumerator restored from checkpoint %d hands out %v again, the split-assignment log says %v were assigned since: it cannot be rebuilt without a restore",
				v, latest, got, want)
		}
		sc.enums[v] = enum
		if len(want) > 0 {
			sc.log.Info("split enumerator rebuilt from the checkpoint and the split assignment log", "source", v,
				"checkpoint", latest, "assignedSince", len(want), "resent", countSplits(resend, v))
		}
		sc.compact(v)
	}
	return resend, nil
}

func countSplits(m map[core.SubtaskID][]stream.Split, v core.VertexID) int {
	n := 0
	for sub, ss := range m {
		if sub.Vertex == v {
			n += len(ss)
		}
	}
	return n
}
