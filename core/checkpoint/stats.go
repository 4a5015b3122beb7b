package checkpoint

import (
	"slices"
	"time"
)

// Status values of a history entry, as Flink's REST API spells them.
const (
	StatusInProgress = "IN_PROGRESS"
	StatusCompleted  = "COMPLETED"
	StatusFailed     = "FAILED"
)

// Counts are the checkpoint counters of GET /jobs/:jobid/checkpoints.
type Counts struct {
	Restored   int64 `json:"restored"`
	Total      int64 `json:"total"`
	InProgress int64 `json:"in_progress"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
}

// HistoryEntry describes one checkpoint. Timestamps are unix milliseconds, durations
// milliseconds.
type HistoryEntry struct {
	ID      int64  `json:"id"`
	Attempt int64  `json:"attempt"`
	Status  string `json:"status"`
	// CheckpointType is CHECKPOINT or SAVEPOINT (empty in statistics an older AM
	// persisted: a checkpoint); SavepointFormat is a savepoint's format type.
	CheckpointType          Type       `json:"checkpoint_type,omitempty"`
	SavepointFormat         FormatType `json:"savepoint_format,omitempty"`
	TriggerTimestamp        int64      `json:"trigger_timestamp"`
	LatestAckTimestamp      int64      `json:"latest_ack_timestamp"`
	StateSize               int64      `json:"state_size"`
	EndToEndDuration        int64      `json:"end_to_end_duration"`
	NumSubtasks             int        `json:"num_subtasks"`
	NumAcknowledgedSubtasks int        `json:"num_acknowledged_subtasks"`
	FailureTimestamp        int64      `json:"failure_timestamp,omitempty"`
	FailureMessage          string     `json:"failure_message,omitempty"`
}

// Type is the entry's CheckpointType, CHECKPOINT when empty (statistics an older AM
// persisted hold only checkpoints).
func (e HistoryEntry) Type() Type { return Options{Type: e.CheckpointType}.typeOrDefault() }

// RestoredEntry describes the checkpoint the job last restored from.
type RestoredEntry struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

// Latest holds the newest completed and failed checkpoints, the newest completed
// savepoint and the last restore.
type Latest struct {
	Completed *HistoryEntry  `json:"completed"`
	Savepoint *HistoryEntry  `json:"savepoint,omitempty"`
	Failed    *HistoryEntry  `json:"failed"`
	Restored  *RestoredEntry `json:"restored"`
}

// Stats is the body of GET /jobs/:jobid/checkpoints; History is newest first.
type Stats struct {
	Counts  Counts         `json:"counts"`
	Latest  Latest         `json:"latest"`
	History []HistoryEntry `json:"history"`
}

// statsTracker keeps the statistics across attempts; history holds at most max
// entries, newest last.
type statsTracker struct {
	max      int
	counts   Counts
	history  []HistoryEntry
	lastDone *HistoryEntry
	lastSP   *HistoryEntry
	failedE  *HistoryEntry
	restore  *RestoredEntry
}

func (s *statsTracker) resize(max int) {
	s.max = max
	s.trim()
}

func (s *statsTracker) trim() {
	if over := len(s.history) - s.max; over > 0 {
		s.history = slices.Delete(s.history, 0, over)
	}
}

func (s *statsTracker) find(id int64) *HistoryEntry {
	for i := len(s.history) - 1; i >= 0; i-- {
		if s.history[i].ID == id {
			return &s.history[i]
		}
	}
	return nil
}

func (s *statsTracker) triggered(id, attempt int64, now time.Time, subtasks int, opts Options) {
	s.counts.Total++
	s.counts.InProgress++
	s.history = append(s.history, HistoryEntry{
		ID: id, Attempt: attempt, Status: StatusInProgress,
		CheckpointType: opts.typeOrDefault(), SavepointFormat: opts.Format,
		TriggerTimestamp: now.UnixMilli(), NumSubtasks: subtasks,
	})
	s.trim()
}

func (s *statsTracker) acked(id int64, now time.Time, acked int, size int64) {
	if e := s.find(id); e != nil {
		e.LatestAckTimestamp = now.UnixMilli()
		e.NumAcknowledgedSubtasks = acked
		e.StateSize = size
		e.EndToEndDuration = now.UnixMilli() - e.TriggerTimestamp
	}
}

func (s *statsTracker) completed(done Completed, now time.Time) {
	s.counts.InProgress--
	s.counts.Completed++
	e := HistoryEntry{
		ID: done.ID, Attempt: done.Attempt, Status: StatusCompleted,
		CheckpointType: done.Options.typeOrDefault(), SavepointFormat: done.Options.Format,
		TriggerTimestamp:   done.Trigger.UnixMilli(),
		LatestAckTimestamp: done.Trigger.Add(done.Duration).UnixMilli(),
		StateSize:          done.Size,
		EndToEndDuration:   now.Sub(done.Trigger).Milliseconds(),
		NumSubtasks:        len(done.Handles), NumAcknowledgedSubtasks: len(done.Handles),
	}
	if h := s.find(done.ID); h != nil {
		*h = e
	}
	if done.Options.IsSavepoint() {
		s.lastSP = &e
		return
	}
	s.lastDone = &e
}

func (s *statsTracker) failed(f Failed, now time.Time) {
	s.counts.InProgress--
	s.counts.Failed++
	var e HistoryEntry
	if h := s.find(f.ID); h != nil {
		h.Status = StatusFailed
		h.FailureTimestamp = now.UnixMilli()
		h.FailureMessage = f.Reason
		e = *h
	} else {
		e = HistoryEntry{ID: f.ID, Attempt: f.Attempt, Status: StatusFailed, CheckpointType: f.Options.typeOrDefault(),
			SavepointFormat: f.Options.Format, FailureTimestamp: now.UnixMilli(), FailureMessage: f.Reason}
	}
	s.failedE = &e
}

func (s *statsTracker) restored(now time.Time, id int64, path string) {
	s.counts.Restored++
	s.restore = &RestoredEntry{ID: id, RestoreTimestamp: now.UnixMilli(), ExternalPath: path}
}

func (s *statsTracker) snapshot() Stats {
	out := Stats{Counts: s.counts, History: make([]HistoryEntry, 0, len(s.history))}
	for i := len(s.history) - 1; i >= 0; i-- {
		out.History = append(out.History, s.history[i])
	}
	if s.lastDone != nil {
		c := *s.lastDone
		out.Latest.Completed = &c
	}
	if s.lastSP != nil {
		sp := *s.lastSP
		out.Latest.Savepoint = &sp
	}
	if s.failedE != nil {
		f := *s.failedE
		out.Latest.Failed = &f
	}
	if s.restore != nil {
		r := *s.restore
		out.Latest.Restored = &r
	}
	return out
}
