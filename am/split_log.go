package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"sync"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/storage"
)

// splitLogDir holds, under <jobID>/ in the checkpoint storage, one split-assignment
// write-ahead log per source vertex (core/source's entries, one JSON line each).
const splitLogDir = "splits"

// splitLogName is the log file of source vertex v, relative to the storage root.
func splitLogName(jobID string, v core.VertexID) string {
	return path.Join(jobID, splitLogDir, url.QueryEscape(string(v))+".log")
}

// splitLogStore writes the split-assignment logs off the loop goroutine, in the order
// the loop asked, one at a time. storage has no append: every write replaces the
// vertex's file atomically with the log since the last compaction, which the
// compaction at each completed checkpoint keeps short. done runs on the loop (through
// post) once the write is durable, or with the error.
type splitLogStore struct {
	st    storage.Storage
	jobID string
	log   *slog.Logger
	post  func(func()) bool

	mu      sync.Mutex
	queue   []splitLogWrite
	wake    chan struct{}
	ctx     context.Context
	stop    context.CancelFunc
	stopped chan struct{}
}

type splitLogWrite struct {
	vertex core.VertexID
	data   []byte
	done   func(error)
}

// splitLogTimeout bounds one write of a log file.
const splitLogTimeout = time.Minute

func newSplitLogStore(st storage.Storage, jobID string, log *slog.Logger, post func(func()) bool) *splitLogStore {
	ctx, stop := context.WithCancel(context.Background())
	s := &splitLogStore{st: st, jobID: jobID, log: log, post: post, wake: make(chan struct{}, 1),
		ctx: ctx, stop: stop, stopped: make(chan struct{})}
	go s.run()
	return s
}

// write queues the whole log of vertex v (loop goroutine).
func (s *splitLogStore) write(v core.VertexID, data []byte, done func(error)) {
	s.mu.Lock()
	s.queue = append(s.queue, splitLogWrite{vertex: v, data: data, done: done})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *splitLogStore) run() {
	defer close(s.stopped)
	for {
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		s.mu.Unlock()
		for i, w := range q {
			// A later write of the same vertex replaces this one: skip to it, and report
			// this one durable together with it.
			if later(q[i+1:], w.vertex) {
				continue
			}
			err := s.put(w.vertex, w.data)
			if s.ctx.Err() != nil {
				return // stopping: nobody waits for the outcome
			}
			for j := range q[:i+1] {
				if done := q[j].done; q[j].vertex == w.vertex && done != nil {
					q[j].done = nil
					s.post(func() { done(err) })
				}
			}
		}
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return
		}
	}
}

func later(q []splitLogWrite, v core.VertexID) bool {
	for _, w := range q {
		if w.vertex == v {
			return true
		}
	}
	return false
}

func (s *splitLogStore) put(v core.VertexID, data []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, splitLogTimeout)
	defer cancel()
	name := splitLogName(s.jobID, v)
	if err := storage.WriteFile(ctx, s.st, name, data); err != nil {
		return fmt.Errorf("write split assignment log of source %s to %s/%s: %w", v, s.st.URI(), name, err)
	}
	return nil
}

// close stops the writer; queued writes not yet started are dropped (their done never
// runs: the AM is stopping).
func (s *splitLogStore) close() {
	s.stop()
	<-s.stopped
}

// read loads the log of vertex v (before the loop starts). A missing log is an empty
// one. A log that does not decode or replay is moved aside to <name>.bad-<unix millis>,
// kept for inspection, and reported in err; the caller starts a fresh log.
func (s *splitLogStore) read(ctx context.Context, v core.VertexID) (t *source.Tracker, truncated bool, err error) {
	name := splitLogName(s.jobID, v)
	data, err := storage.ReadFile(ctx, s.st, name)
	if errors.Is(err, storage.ErrNotFound) {
		return source.NewTracker(), false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read split assignment log of source %s at %s/%s: %w", v, s.st.URI(), name, err)
	}
	entries, truncated, err := source.DecodeLog(data)
	if err == nil {
		t, err = source.Replay(entries)
	}
	if err != nil {
		bad := fmt.Sprintf("%s.bad-%d", name, time.Now().UnixMilli())
		if rerr := s.st.Rename(ctx, name, bad); rerr != nil {
			return nil, false, fmt.Errorf("split assignment log of source %s at %s/%s: %w (and moving it aside failed: %v)", v, s.st.URI(), name, err, rerr)
		}
		return nil, false, fmt.Errorf("split assignment log of source %s at %s/%s (kept as %s): %w", v, s.st.URI(), name, bad, err)
	}
	return t, truncated, nil
}

// encodeEntries appends entries to a log's bytes.
func encodeEntries(buf []byte, entries []source.Entry) ([]byte, error) {
	for _, e := range entries {
		b, err := source.EncodeEntry(e)
		if err != nil {
			return buf, err
		}
		buf = append(buf, b...)
	}
	return buf, nil
}
