package testkit

import (
	"context"
	"strings"
	"sync"

	"github.com/tidestream/tide/storage"
)

// StallStorage wraps a storage so a test can stall it: while stalled, every Commit of a
// file whose name contains the filter (all files when empty) blocks until Release, as a
// NameNode that stopped answering would; everything else passes through.
type StallStorage struct {
	storage.Storage

	mu      sync.Mutex
	filter  string
	gate    chan struct{} // nil: not stalled
	blocked int
	commits map[string]int
}

// NewStallStorage wraps st.
func NewStallStorage(st storage.Storage) *StallStorage {
	return &StallStorage{Storage: st, commits: map[string]int{}}
}

// Stall makes the commits of files whose name contains filter block until Release.
func (s *StallStorage) Stall(filter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate == nil {
		s.gate = make(chan struct{})
	}
	s.filter = filter
}

// Release lets every blocked commit go on and stops stalling.
func (s *StallStorage) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
}

// Blocked is how many commits are blocked now.
func (s *StallStorage) Blocked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocked
}

// Commits is how many commits of files whose name contains part have completed.
func (s *StallStorage) Commits(part string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, c := range s.commits {
		if strings.Contains(name, part) {
			n += c
		}
	}
	return n
}

// Create wraps the writer so that its Commit obeys the stall.
func (s *StallStorage) Create(ctx context.Context, name string) (storage.Writer, error) {
	w, err := s.Storage.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &stallWriter{Writer: w, s: s, name: name}, nil
}

type stallWriter struct {
	storage.Writer
	s    *StallStorage
	name string
}

func (w *stallWriter) Commit(ctx context.Context) error {
	s := w.s
	s.mu.Lock()
	gate := s.gate
	if gate != nil && strings.Contains(w.name, s.filter) {
		s.blocked++
		s.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
		}
		s.mu.Lock()
		s.blocked--
	}
	s.mu.Unlock()
	if err := w.Writer.Commit(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.commits[w.name]++
	s.mu.Unlock()
	return nil
}
