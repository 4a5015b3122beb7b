package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"sync"
	"time"

	"github.com/tidestream/tide/storage"
)

// amStateStore writes the AM state (see amState) beside the checkpoints, off the event
// loop. The loop hands it the newest state with save, which never blocks; one writer
// goroutine writes the newest state it has (older ones it never got to are skipped) and
// retries a failed write with backoff until it lands. Whoever must not answer before a
// change is durable (a REST blocklist change) waits for the version save returned. A nil
// store (no state.checkpoints.dir) keeps nothing and waits for nothing.
type amStateStore struct {
	st   storage.Storage
	name string
	log  *slog.Logger

	mu      sync.Mutex
	latest  amState
	version uint64 // of latest
	durable uint64 // newest version written
	// failed is the newest version whose write failed with lastErr (0: none since the
	// last success).
	failed  uint64
	lastErr error
	// settled is closed and replaced whenever durable or failed moves.
	settled chan struct{}
	kick    chan struct{}
}

// amStateWriteTimeout bounds one write of the AM state.
const amStateWriteTimeout = time.Minute

// amStateRetry paces the writer's retries after a failed write.
var amStateRetry = struct{ first, max time.Duration }{time.Second, 30 * time.Second}

func newAMStateStore(st storage.Storage, jobID string, log *slog.Logger) *amStateStore {
	if st == nil {
		return nil
	}
	return &amStateStore{st: st, name: path.Join(jobID, amStateFile), log: log,
		settled: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// uri is the state file's full URI, for logs and errors.
func (p *amStateStore) uri() string { return p.st.URI() + "/" + p.name }

// load reads the state an earlier attempt persisted; ok is false when there is none. A
// file that does not parse is moved aside (<name>.damaged, kept for inspection) and
// reported; the job then goes on without it.
func (p *amStateStore) load(ctx context.Context, jobID string) (s amState, ok bool, err error) {
	if p == nil {
		return amState{}, false, nil
	}
	data, err := storage.ReadFile(ctx, p.st, p.name)
	if errors.Is(err, storage.ErrNotFound) {
		return amState{}, false, nil
	}
	if err != nil {
		return amState{}, false, fmt.Errorf("read AM state %s: %w", p.uri(), err)
	}
	s, err = decodeAMState(data, jobID, p.uri())
	if err != nil {
		if rerr := p.st.Rename(ctx, p.name, p.name+".damaged"); rerr != nil {
			return amState{}, false, errors.Join(err, fmt.Errorf("move it aside: %w", rerr))
		}
		return amState{}, false, fmt.Errorf("%w (moved to %s.damaged)", err, p.uri())
	}
	return s, true, nil
}

// save hands the writer the newest state and returns its version (loop goroutine; never
// blocks).
func (p *amStateStore) save(s amState) uint64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	p.version++
	p.latest = s
	v := p.version
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	return v
}

// wait returns once version v (or a newer one) is durable, or with the error of the last
// write that would have covered it, or when ctx ends.
func (p *amStateStore) wait(ctx context.Context, v uint64) error {
	if p == nil {
		return nil
	}
	for {
		p.mu.Lock()
		durable, failed, lastErr, settled := p.durable, p.failed, p.lastErr, p.settled
		p.mu.Unlock()
		switch {
		case durable >= v:
			return nil
		case failed >= v:
			return fmt.Errorf("persist AM state to %s: %w", p.uri(), lastErr)
		}
		select {
		case <-settled:
		case <-ctx.Done():
			return fmt.Errorf("persist AM state to %s: %w", p.uri(), context.Cause(ctx))
		}
	}
}

// run is the writer; it returns when stop is closed and everything saved before is
// written (or a last attempt failed).
func (p *amStateStore) run(stop <-chan struct{}) {
	if p == nil {
		return
	}
	backoff := time.Duration(0)
	for {
		if backoff > 0 {
			select {
			case <-time.After(backoff):
			case <-stop:
			}
		} else {
			select {
			case <-p.kick:
			case <-stop:
			}
		}
		err := p.writeLatest()
		select {
		case <-stop:
			// One last write after stop (above) flushed what was saved; done.
			if err == nil && p.pending() {
				err = p.writeLatest()
			}
			if err != nil {
				p.log.Warn("could not persist the AM state before stopping", "path", p.uri(), "err", err)
			}
			return
		default:
		}
		switch {
		case err == nil:
			backoff = 0
		case backoff == 0:
			backoff = amStateRetry.first
		default:
			backoff = min(2*backoff, amStateRetry.max)
		}
		if err != nil {
			p.log.Warn("could not persist the AM state; retrying", "path", p.uri(), "retryIn", backoff, "err", err)
		}
	}
}

func (p *amStateStore) pending() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.durable < p.version
}

// writeLatest writes the newest saved state if it is not durable yet.
func (p *amStateStore) writeLatest() error {
	p.mu.Lock()
	s, v := p.latest, p.version
	done := p.durable >= v
	p.mu.Unlock()
	if done {
		return nil
	}
	data, err := encodeAMState(s)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), amStateWriteTimeout)
		err = storage.WriteFile(ctx, p.st, p.name, data)
		cancel()
	}
	p.mu.Lock()
	if err == nil {
		p.durable, p.failed, p.lastErr = max(p.durable, v), 0, nil
	} else {
		p.failed, p.lastErr = v, err
	}
	close(p.settled)
	p.settled = make(chan struct{})
	p.mu.Unlock()
	return err
}

// remove deletes the state file: the job reached a globally terminal status, so no
// attempt will resume it.
func (p *amStateStore) remove(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.st.Delete(ctx, p.name); err != nil {
		return fmt.Errorf("delete AM state %s: %w", p.uri(), err)
	}
	return nil
}
