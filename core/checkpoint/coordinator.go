package checkpoint

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Completed is a checkpoint every expected subtask acknowledged. The AM writes its
// _metadata and then calls Finalized (or FinalizeFailed).
type Completed struct {
	ID       int64
	Attempt  int64
	Trigger  time.Time
	Handles  []SubtaskState // sorted by subtask
	Duration time.Duration  // trigger to last acknowledgement
	Size     int64          // bytes over all handles
	// Options say whether it is a savepoint (written into its own directory, not retained).
	Options Options
}

// Failed is a checkpoint that will not complete.
type Failed struct {
	ID      int64
	Attempt int64
	Reason  string
	Options Options
}

// pending is the checkpoint in flight.
type pending struct {
	id        int64
	attempt   int64
	triggered time.Time
	waiting   map[Subtask]bool
	acked     map[Subtask][]StateHandle
	size      int64
	opts      Options
}

// Coordinator decides the checkpoints of one job across its attempts. It is not safe
// for concurrent use; the core's event loop owns it.
type Coordinator struct {
	cfg        Config
	attempt    int64
	nextID     int64
	pending    *pending
	finalizing map[int64]Completed
	// lastCompletion is when the latest checkpoint was finalized (min-pause reference).
	lastCompletion time.Time
	retained       []int64 // finalized ids still kept, ascending
	stats          statsTracker
}

// NewCoordinator returns a coordinator whose first checkpoint id is firstID (≥ 1).
func NewCoordinator(cfg Config, firstID int64) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint coordinator: %w", err)
	}
	if firstID < 1 {
		return nil, fmt.Errorf("checkpoint coordinator: first checkpoint id %d: expected ≥ 1", firstID)
	}
	return &Coordinator{cfg: cfg, nextID: firstID, finalizing: map[int64]Completed{}, stats: statsTracker{max: cfg.HistorySize}}, nil
}

// SetConfig applies a reloaded configuration. A smaller NumRetained returns the ids
// that are now beyond it, to delete.
func (c *Coordinator) SetConfig(cfg Config) ([]int64, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint coordinator: %w", err)
	}
	c.cfg = cfg
	c.stats.resize(cfg.HistorySize)
	return c.trimRetained(), nil
}

// Config returns the current configuration.
func (c *Coordinator) Config() Config { return c.cfg }

// Attempt returns the current attempt.
func (c *Coordinator) Attempt() int64 { return c.attempt }

// Adopt takes over the checkpoints a previous AM left behind: complete are the ids of
// complete checkpoints found in storage, highest the highest chk-<n> seen at all (new
// ids continue above it). It returns the complete ids beyond NumRetained, to delete.
func (c *Coordinator) Adopt(complete []int64, highest int64) []int64 {
	for _, id := range complete {
		if !slices.Contains(c.retained, id) {
			c.retained = append(c.retained, id)
		}
		highest = max(highest, id)
	}
	slices.Sort(c.retained)
	c.nextID = max(c.nextID, highest+1)
	return c.trimRetained()
}

// Restored records in the statistics that the job restored checkpoint id from path.
func (c *Coordinator) Restored(now time.Time, id int64, path string) {
	c.stats.restored(now, id, path)
}

// NewAttempt switches to a newer deployment attempt: the pending checkpoint (of an
// older attempt) fails. Checkpoints being finalized are unaffected; their state is
// complete. An attempt not newer than the current one changes nothing.
func (c *Coordinator) NewAttempt(now time.Time, attempt int64) []Failed {
	if attempt <= c.attempt {
		return nil
	}
	c.attempt = attempt
	if c.pending == nil {
		return nil
	}
	return []Failed{c.fail(now, fmt.Sprintf("attempt %d superseded by attempt %d", c.pending.attempt, attempt))}
}

// AbortPending fails the pending checkpoint, if any, with reason (job cancelled,
// suspended or failing).
func (c *Coordinator) AbortPending(now time.Time, reason string) []Failed {
	if c.pending == nil {
		return nil
	}
	return []Failed{c.fail(now, reason)}
}

// EarliestTrigger is the earliest time Trigger is not refused for the minimum pause.
func (c *Coordinator) EarliestTrigger() time.Time {
	if c.lastCompletion.IsZero() {
		return time.Time{}
	}
	return c.lastCompletion.Add(c.cfg.MinPause)
}

// Trigger starts checkpoint number id for attempt, to be acknowledged by every subtask
// in expected. A newer attempt first fails the pending checkpoint of the older one (see
// NewAttempt). Refusals wrap ErrInFlight, ErrMinPause (as *TooEarlyError),
// ErrNoSubtasks or ErrStaleAttempt.
func (c *Coordinator) Trigger(now time.Time, attempt int64, expected []Subtask) (int64, error) {
	return c.triggerWith(now, attempt, expected, Options{})
}

// TriggerSavepoint starts a savepoint in format: a checkpoint of its own kind that takes
// the next id, is refused like Trigger (except for the minimum pause, which savepoints
// ignore) and, once finalized, is neither retained nor the latest checkpoint.
func (c *Coordinator) TriggerSavepoint(now time.Time, attempt int64, expected []Subtask, format FormatType) (int64, error) {
	return c.triggerWith(now, attempt, expected, Options{Type: TypeSavepoint, Format: format})
}

// triggerWith starts a checkpoint with opts (see Trigger and TriggerSavepoint).
func (c *Coordinator) triggerWith(now time.Time, attempt int64, expected []Subtask, opts Options) (int64, error) {
	opts.Type = opts.typeOrDefault()
	if opts.IsSavepoint() && opts.Format == "" {
		opts.Format = FormatCanonical
	}
	if attempt < c.attempt {
		return 0, fmt.Errorf("trigger checkpoint for attempt %d: %w (current attempt %d)", attempt, ErrStaleAttempt, c.attempt)
	}
	c.NewAttempt(now, attempt)
	if c.pending != nil {
		return 0, fmt.Errorf("trigger checkpoint for attempt %d: %w (checkpoint %d pending since %s)",
			attempt, ErrInFlight, c.pending.id, c.pending.triggered.UTC().Format(time.RFC3339Nano))
	}
	if len(c.finalizing) > 0 {
		ids := slices.Sorted(maps.Keys(c.finalizing))
		return 0, fmt.Errorf("trigger checkpoint for attempt %d: %w (checkpoint %d awaiting its _metadata)", attempt, ErrInFlight, ids[0])
	}
	if until := c.EarliestTrigger(); now.Before(until) && !opts.IsSavepoint() {
		return 0, fmt.Errorf("trigger checkpoint for attempt %d: %w", attempt, &TooEarlyError{Until: until})
	}
	if len(expected) == 0 {
		return 0, fmt.Errorf("trigger checkpoint for attempt %d: %w", attempt, ErrNoSubtasks)
	}
	p := &pending{id: c.nextID, attempt: attempt, triggered: now, waiting: map[Subtask]bool{}, acked: map[Subtask][]StateHandle{}, opts: opts}
	for _, s := range expected {
		p.waiting[s] = true
	}
	c.nextID++
	c.pending = p
	c.stats.triggered(p.id, attempt, now, len(p.waiting), opts)
	return p.id, nil
}

// Pending returns the id and options of the pending checkpoint.
func (c *Coordinator) Pending() (int64, Options, bool) {
	if c.pending == nil {
		return 0, Options{}, false
	}
	return c.pending.id, c.pending.opts, true
}

// InFlight returns the id of the pending checkpoint (see Pending for its options).
func (c *Coordinator) InFlight() (int64, bool) {
	id, _, ok := c.Pending()
	return id, ok
}

// Ack records that subtask of attempt wrote its state for checkpoint id. When it is the
// last one expected, the checkpoint is complete and returned; the AM then writes the
// _metadata and calls Finalized.
func (c *Coordinator) Ack(now time.Time, attempt, id int64, subtask Subtask, handles []StateHandle) (*Completed, error) {
	p, err := c.pendingFor("acknowledge", attempt, id, subtask)
	if err != nil {
		return nil, err
	}
	hs := slices.Clone(handles)
	if hs == nil {
		hs = []StateHandle{}
	}
	for _, h := range hs {
		p.size += h.Size
	}
	delete(p.waiting, subtask)
	p.acked[subtask] = hs
	c.stats.acked(id, now, len(p.acked), p.size)
	if len(p.waiting) > 0 {
		return nil, nil
	}
	done := Completed{ID: p.id, Attempt: p.attempt, Trigger: p.triggered, Duration: now.Sub(p.triggered), Size: p.size, Options: p.opts}
	for s, h := range p.acked {
		done.Handles = append(done.Handles, SubtaskState{Subtask: s, Handles: h})
	}
	sortSubtaskStates(done.Handles)
	c.pending = nil
	c.finalizing[done.ID] = done
	return &done, nil
}

// Decline fails checkpoint id because subtask could not take it.
func (c *Coordinator) Decline(now time.Time, attempt, id int64, subtask Subtask, reason string) (Failed, error) {
	if _, err := c.pendingFor("decline", attempt, id, subtask); err != nil {
		return Failed{}, err
	}
	return c.fail(now, fmt.Sprintf("declined by %s: %s", subtask, reason)), nil
}

// NextTimeout is when the pending checkpoint times out.
func (c *Coordinator) NextTimeout() (time.Time, bool) {
	if c.pending == nil {
		return time.Time{}, false
	}
	return c.pending.triggered.Add(c.cfg.Timeout), true
}

// Timeout fails the pending checkpoint if it has run for execution.checkpointing.timeout.
func (c *Coordinator) Timeout(now time.Time) []Failed {
	deadline, ok := c.NextTimeout()
	if !ok || now.Before(deadline) {
		return nil
	}
	missing := make([]Subtask, 0, len(c.pending.waiting))
	for s := range c.pending.waiting {
		missing = append(missing, s)
	}
	slices.SortFunc(missing, compareSubtasks)
	return []Failed{c.fail(now, fmt.Sprintf("expired after %s before %d of %d subtasks acknowledged (first missing: %s)",
		c.cfg.Timeout, len(missing), len(missing)+len(c.pending.acked), missing[0]))}
}

// Finalized records that the _metadata of completed checkpoint id is durable: it is now
// the latest checkpoint. It returns the ids beyond state.checkpoints.num-retained, oldest
// first, for the AM to delete. A savepoint only shows in the statistics: it is not
// retained (nothing to delete), and the latest checkpoint stays what it was.
func (c *Coordinator) Finalized(now time.Time, id int64) ([]int64, error) {
	done, ok := c.finalizing[id]
	if !ok {
		return nil, fmt.Errorf("finalize checkpoint %d: %w (no completed checkpoint awaits its _metadata)", id, ErrUnknownCheckpoint)
	}
	delete(c.finalizing, id)
	if done.Options.IsSavepoint() {
		c.stats.completed(done, now)
		return nil, nil
	}
	c.lastCompletion = now
	if !slices.Contains(c.retained, id) {
		c.retained = append(c.retained, id)
		slices.Sort(c.retained)
	}
	c.stats.completed(done, now)
	return c.trimRetained(), nil
}

// FinalizeFailed records that the _metadata of checkpoint id could not be written.
func (c *Coordinator) FinalizeFailed(now time.Time, id int64, reason string) (Failed, error) {
	done, ok := c.finalizing[id]
	if !ok {
		return Failed{}, fmt.Errorf("fail finalizing checkpoint %d: %w", id, ErrUnknownCheckpoint)
	}
	delete(c.finalizing, id)
	f := Failed{ID: id, Attempt: done.Attempt, Reason: "writing _metadata failed: " + reason, Options: done.Options}
	c.stats.failed(f, now)
	return f, nil
}

// Latest returns the newest finalized checkpoint, the restore point of the next attempt.
func (c *Coordinator) Latest() (int64, bool) {
	if len(c.retained) == 0 {
		return 0, false
	}
	return c.retained[len(c.retained)-1], true
}

// Retained returns the finalized checkpoints still kept, ascending.
func (c *Coordinator) Retained() []int64 { return slices.Clone(c.retained) }

// Stats returns the statistics for GET /jobs/:jobid/checkpoints.
func (c *Coordinator) Stats() Stats { return c.stats.snapshot() }

func (c *Coordinator) pendingFor(op string, attempt, id int64, subtask Subtask) (*pending, error) {
	if attempt != c.attempt {
		return nil, fmt.Errorf("%s checkpoint %d from %s of attempt %d: %w (current attempt %d)", op, id, subtask, attempt, ErrStaleAttempt, c.attempt)
	}
	if c.pending == nil || c.pending.id != id {
		return nil, fmt.Errorf("%s checkpoint %d from %s: %w", op, id, subtask, ErrUnknownCheckpoint)
	}
	if !c.pending.waiting[subtask] {
		if _, ok := c.pending.acked[subtask]; ok {
			return nil, fmt.Errorf("%s checkpoint %d from %s: %w", op, id, subtask, ErrDuplicateAck)
		}
		return nil, fmt.Errorf("%s checkpoint %d from %s: %w", op, id, subtask, ErrUnexpectedSubtask)
	}
	return c.pending, nil
}

func (c *Coordinator) fail(now time.Time, reason string) Failed {
	f := Failed{ID: c.pending.id, Attempt: c.pending.attempt, Reason: reason, Options: c.pending.opts}
	c.pending = nil
	c.stats.failed(f, now)
	return f
}

func (c *Coordinator) trimRetained() []int64 {
	over := len(c.retained) - c.cfg.NumRetained
	if over <= 0 {
		return nil
	}
	discard := slices.Clone(c.retained[:over])
	c.retained = slices.Delete(c.retained, 0, over)
	return discard
}
