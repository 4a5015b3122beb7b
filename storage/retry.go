package storage

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"time"
)

// class is what a classifier says about an error.
type class struct {
	kind      error // sentinel, or nil
	dir       string
	transient bool // worth retrying
	reconnect bool // the connection is suspect: drop the client before retrying
}

// classifyCommon sorts the errors every storage shares: invalid names, and the file
// system's not-found and permission errors (io/fs sentinels). ok is false for any other error.
func classifyCommon(err error) (c class, ok bool) {
	switch {
	case errors.Is(err, ErrClosed):
		return class{kind: ErrClosed}, true
	case errors.Is(err, ErrInvalidName):
		return class{kind: ErrInvalidName}, true
	case errors.Is(err, fs.ErrNotExist):
		return class{kind: ErrNotFound}, true
	case errors.Is(err, fs.ErrPermission):
		return class{kind: ErrPermission}, true
	}
	return class{}, false
}

// retrier runs operations with bounded retries of transient errors.
type retrier struct {
	policy    RetryPolicy
	log       *slog.Logger
	classify  func(error) class
	reconnect func() // called before retrying an error whose class says reconnect
}

// do runs fn until it succeeds, fails permanently, the attempts run out or ctx ends. The
// returned error is an *Error for op on uri.
func (r *retrier) do(ctx context.Context, op, uri string, fn func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return &Error{Op: op, Path: uri, Attempts: attempt - 1, Err: context.Cause(ctx)}
		}
		err := fn(attempt)
		if err == nil {
			return nil
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return &Error{Op: op, Path: uri, Attempts: attempt, Err: err}
		}
		var se *Error
		if errors.As(err, &se) && se.Kind == ErrWriterClosed {
			return err
		}
		c := r.classify(err)
		if !c.transient {
			return &Error{Op: op, Path: uri, Kind: c.kind, Dir: c.dir, Attempts: attempt, Err: err}
		}
		if attempt >= r.policy.Attempts {
			kind := c.kind
			if kind == nil {
				kind = ErrUnavailable
			}
			r.log.Error("storage: giving up after transient errors", "op", op, "path", uri, "attempts", attempt, "err", err)
			return &Error{Op: op, Path: uri, Kind: kind, Attempts: attempt, Err: err}
		}
		wait := jitter(r.policy.backoff(attempt))
		r.log.Warn("storage: transient error, retrying", "op", op, "path", uri, "attempt", attempt,
			"max_attempts", r.policy.Attempts, "backoff", wait, "reconnect", c.reconnect, "err", err)
		if c.reconnect && r.reconnect != nil {
			r.reconnect()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return &Error{Op: op, Path: uri, Attempts: attempt, Err: errors.Join(context.Cause(ctx), err)}
		case <-t.C:
		}
	}
}

// jitter spreads d by ±20 % so that many writers do not retry in lock step.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	spread := int64(d) / 5
	return d - time.Duration(spread) + time.Duration(rand.Int64N(2*spread+1))
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
