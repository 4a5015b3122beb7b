package checkpoint

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrInFlight: Trigger refused because a checkpoint is pending or being finalized.
	ErrInFlight = errors.New("a checkpoint is already in progress")
	// ErrMinPause: Trigger refused because execution.checkpointing.min-pause has not
	// passed since the last checkpoint completed; see *TooEarlyError for when it has.
	ErrMinPause = errors.New("minimum pause between checkpoints not over")
	// ErrNoSubtasks: Trigger with no subtask to acknowledge.
	ErrNoSubtasks = errors.New("no subtasks expected to acknowledge")
	// ErrStaleAttempt: a call names an attempt older than the current one.
	ErrStaleAttempt = errors.New("stale attempt")
	// ErrUnknownCheckpoint: the checkpoint is not pending (never triggered, already
	// completed, failed or timed out).
	ErrUnknownCheckpoint = errors.New("checkpoint is not pending")
	// ErrUnexpectedSubtask: an acknowledgement from a subtask the checkpoint does not wait for.
	ErrUnexpectedSubtask = errors.New("subtask not expected to acknowledge")
	// ErrDuplicateAck: a subtask acknowledged the same checkpoint twice; the second is ignored.
	ErrDuplicateAck = errors.New("duplicate acknowledgement")
)

// TooEarlyError says when a Trigger refused for the minimum pause may succeed.
type TooEarlyError struct {
	Until time.Time
}

func (e *TooEarlyError) Error() string {
	return fmt.Sprintf("%v: next checkpoint allowed at %s", ErrMinPause, e.Until.UTC().Format(time.RFC3339Nano))
}

func (e *TooEarlyError) Unwrap() error { return ErrMinPause }
