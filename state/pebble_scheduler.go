package state

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// gatedScheduler is Pebble's compaction scheduler for tide's instances: Pebble's own
// ConcurrencyLimitScheduler (grant as many compactions as the instance allows, sampled
// every 100 ms and whenever a compaction ends), with a gate that grants nothing until the
// instance is open.
//
// Why the gate: pebble.Open, after registering with the scheduler, waits for every
// compaction in progress before it scans for obsolete files. A restored instance (a
// checkpoint's tables, local or downloaded) usually has compaction debt, so a compaction
// starts during Open and the restore waits for all of it: seconds for a large instance,
// which made a restore from local files little faster than one that downloads. With the
// gate, Open returns at once and the compactions run while the subtask processes.
type gatedScheduler struct {
	db   pebble.DBForCompaction
	poke chan struct{}
	stop chan struct{}
	done chan struct{}

	mu           sync.Mutex
	open         bool
	unregistered bool
	running      int
}

var _ pebble.CompactionScheduler = (*gatedScheduler)(nil)

func newGatedScheduler() *gatedScheduler {
	return &gatedScheduler{poke: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Register is called by pebble.Open.
func (s *gatedScheduler) Register(_ int, db pebble.DBForCompaction) {
	s.db = db
	go s.granter()
}

// openGate lets compactions run (the instance is open).
func (s *gatedScheduler) openGate() {
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
	s.wake()
}

// closeGate stops granting compactions (PebbleBackend.Retire); running ones finish.
func (s *gatedScheduler) closeGate() {
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
}

// Unregister is called by Close; no grant happens after it returns (grants are made
// only on the granter goroutine, which has ended).
func (s *gatedScheduler) Unregister() {
	s.mu.Lock()
	s.unregistered = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
}

// TrySchedule is called by the DB (holding its mutex) when it wants to compact.
func (s *gatedScheduler) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open || s.unregistered || s.db.GetAllowedWithoutPermission() <= s.running {
		return false, nil
	}
	s.running++
	return true, s
}

// UpdateGetAllowedWithoutPermission: a flush may allow more compactions.
func (s *gatedScheduler) UpdateGetAllowedWithoutPermission() { s.wake() }

func (s *gatedScheduler) wake() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// The grant handle: the scheduler itself, as in Pebble's.
func (s *gatedScheduler) Started()                                          {}
func (s *gatedScheduler) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (s *gatedScheduler) CumulativeStats(pebble.CompactionGrantHandleStats) {}

// Done is called when a granted compaction ends.
func (s *gatedScheduler) Done() {
	s.mu.Lock()
	s.running--
	s.mu.Unlock()
	s.wake()
}

func (s *gatedScheduler) granter() {
	defer close(s.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		case <-s.poke:
		}
		s.grant()
	}
}

// grant offers the waiting compactions as many grants as the instance allows (on the
// granter goroutine only). The DB's
// methods that take its mutex are called without s.mu held (the DB holds its mutex when
// it calls TrySchedule, which takes s.mu).
func (s *gatedScheduler) grant() {
	s.mu.Lock()
	if !s.open || s.unregistered {
		s.mu.Unlock()
		return
	}
	toGrant := s.db.GetAllowedWithoutPermission() - s.running
	s.mu.Unlock()
	for ; toGrant > 0; toGrant-- {
		if waiting, _ := s.db.GetWaitingCompaction(); !waiting {
			break
		}
		s.mu.Lock()
		s.running++ // before Schedule: the compaction may end (Done) before it returns
		s.mu.Unlock()
		if !s.db.Schedule(s) {
			s.mu.Lock()
			s.running--
			s.mu.Unlock()
			break
		}
	}
}
