package am

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/rest"
)

// errJobTerminated: the job has ended, so it can no longer be changed.
var errJobTerminated = errors.New("the job has terminated")

// restState is what the REST API keeps besides the view: the auth check, the operations
// triggered by id, the one resource-requirements update in flight, and the job graph.
type restState struct {
	auth     *rest.Auth
	triggers *triggers
	// updating is set while a PUT resource-requirements is being applied (409 for another).
	updating atomic.Bool
	// afterLoop serializes reads of the core once the loop has ended.
	afterLoop sync.Mutex

	graphOnce sync.Once
	graph     *jobgraph.JobGraph
	graphErr  error
}

func newRESTState(cfg Config) (*restState, error) {
	auth, err := rest.NewAuth(cfg.RESTListener, cfg.RESTAuthToken, cfg.RESTAuthTokenFile)
	if err != nil {
		return nil, err
	}
	return &restState{auth: auth, triggers: newTriggers()}, nil
}

// jobGraph is the job's graph as built from its definition (names, edges).
func (a *AM) jobGraph() (*jobgraph.JobGraph, error) {
	s := a.api
	s.graphOnce.Do(func() { s.graph, s.graphErr = a.cfg.Job.Graph() })
	return s.graph, s.graphErr
}

// loopTask runs f at most once, on whichever side claims it first: the loop goroutine
// (run) or a caller that stops waiting or takes over once the loop has ended (claim).
type loopTask struct {
	claimed atomic.Bool
	f       func()
	done    chan struct{}
}

func newLoopTask(f func()) *loopTask { return &loopTask{f: f, done: make(chan struct{})} }

func (t *loopTask) run() {
	if t.claim() {
		t.f()
		close(t.done)
	}
}

// claim reports whether the caller now owns the task (the loop will not run it).
func (t *loopTask) claim() bool { return t.claimed.CompareAndSwap(false, true) }

// inspect runs f on the loop goroutine, where it may read the core, and waits for it.
// Once the loop has ended the core no longer changes and f runs on the caller's goroutine.
func (a *AM) inspect(ctx context.Context, f func()) error {
	t := newLoopTask(f)
	if a.post(t.run) {
		select {
		case <-t.done:
			return nil
		case <-a.loopDone:
		case <-ctx.Done():
			if t.claim() {
				return fmt.Errorf("waiting for the AM's event loop: %w", context.Cause(ctx))
			}
			<-t.done
			return nil
		}
	}
	a.api.afterLoop.Lock()
	defer a.api.afterLoop.Unlock()
	if t.claim() {
		f()
		return nil
	}
	<-t.done
	return nil
}

// mutate runs f on the loop goroutine and waits for it; after the loop has ended it
// returns errJobTerminated without running f.
func (a *AM) mutate(ctx context.Context, f func()) error {
	t := newLoopTask(f)
	if !a.post(t.run) {
		return errJobTerminated
	}
	select {
	case <-t.done:
		return nil
	case <-a.loopDone:
	case <-ctx.Done():
	}
	if t.claim() {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for the AM's event loop: %w", context.Cause(ctx))
		}
		return errJobTerminated
	}
	<-t.done
	return nil
}
