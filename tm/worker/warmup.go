package worker

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/localstate"
	"github.com/tidestream/tide/tm/warmup"
)

// localStates opens the TaskManager's local state store (tm/localstate) once, in a new
// directory under the temporary directory named after the TaskManager; it lives as long
// as the process and is removed when the TaskManager ends.
type localStates struct {
	once  sync.Once
	store *localstate.Store
	err   error
}

func (l *localStates) open(id string, log *slog.Logger) (*localstate.Store, error) {
	l.once.Do(func() {
		name := strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == os.PathSeparator {
				return '_'
			}
			return r
		}, id)
		dir, err := os.MkdirTemp("", "tide-localstate-"+name+"-")
		if err != nil {
			l.err = fmt.Errorf("TaskManager %s: local state directory: %w", id, err)
			return
		}
		l.store, l.err = localstate.Open(dir, log)
		if l.err != nil {
			l.err = fmt.Errorf("TaskManager %s: local state: %w", id, l.err)
		}
	})
	return l.store, l.err
}

// remove deletes the store's directory (the TaskManager is ending).
func (l *localStates) remove(log *slog.Logger) {
	if l.store == nil {
		return
	}
	if err := os.RemoveAll(l.store.Dir()); err != nil {
		log.Warn("removing the local state directory", "dir", l.store.Dir(), "err", err)
	}
}

// newFetcher starts the warm-up copies of one registered session: they report to the AM
// through sess.
func (w *worker) newFetcher(jobID string, st storage.Storage, sess *amSession, log *slog.Logger) (*warmup.Fetcher, error) {
	store, err := w.local.open(w.cfg.ID, w.log)
	if err != nil {
		return nil, err
	}
	return warmup.New(warmup.Config{JobID: jobID, Storage: st, Local: store, Logger: log, Report: func(p warmup.Progress) {
		msg := &rpc.WarmupProgress{Round: p.Round, Vertex: p.Vertex, KeyGroupStart: int32(p.Start), KeyGroupEnd: int32(p.End),
			CheckpointId: p.Checkpoint, Bytes: p.Bytes}
		if p.Err != nil {
			msg.Error = p.Err.Error()
		}
		_ = sess.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_WarmupProgress{WarmupProgress: msg}})
	}}), nil
}

// warmupRequest converts the AM's request.
func warmupRequest(m *rpc.WarmupRequest) warmup.Request {
	req := warmup.Request{Round: m.GetRound(), Kind: m.GetKind(), Checkpoint: m.GetCheckpointId()}
	for _, r := range m.GetRanges() {
		wr := warmup.Range{Vertex: r.GetVertex(), Start: int(r.GetKeyGroupStart()), End: int(r.GetKeyGroupEnd()), SourceAttempt: r.GetSourceAttempt()}
		for _, s := range r.GetSources() {
			wr.Sources = append(wr.Sources, warmup.Source{Subtask: int(s.GetSubtask()), Start: int(s.GetKeyGroupStart()), End: int(s.GetKeyGroupEnd())})
		}
		req.Ranges = append(req.Ranges, wr)
	}
	return req
}
