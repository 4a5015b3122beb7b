package am

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tidestream/tide/core/jobgraph"
)

// errJobTerminated: the job has ended, so it can no longer be changed.
var errJobTerminated = errors.New("the job has terminated")

// restState is what the REST API keeps besides the view: the auth check, the operations
// triggered by id, the one resource-requirements update in flight, and the job graph.
type restState struct {
	auth     *restAuth
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
	auth, err := newRESTAuth(cfg.RESTListener, cfg.RESTAuthToken, cfg.RESTAuthTokenFile)
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

// inspect runs f on the loop goroutine, where it may read the core, and waits for it.
// Once the loop has ended the core no longer changes and f runs on the caller's goroutine.
func (a *AM) inspect(ctx context.Context, f func()) error {
	var claimed atomic.Bool
	done := make(chan struct{})
	run := func() {
		if claimed.CompareAndSwap(false, true) {
			f()
			close(done)
		}
	}
	if a.post(run) {
		select {
		case <-done:
			return nil
		case <-a.loopDone:
		case <-ctx.Done():
			if claimed.CompareAndSwap(false, true) {
				return fmt.Errorf("waiting for the AM's event loop: %w", context.Cause(ctx))
			}
			<-done
			return nil
		}
	}
	a.api.afterLoop.Lock()
	defer a.api.afterLoop.Unlock()
	if claimed.CompareAndSwap(false, true) {
		f()
		return nil
	}
	<-done
	return nil
}

// mutate runs f on the loop goroutine and waits for it; after the loop has ended it
// returns errJobTerminated without running f.
func (a *AM) mutate(ctx context.Context, f func()) error {
	var claimed atomic.Bool
	done := make(chan struct{})
	run := func() {
		if claimed.CompareAndSwap(false, true) {
			f()
			close(done)
		}
	}
	if !a.post(run) {
		return errJobTerminated
	}
	select {
	case <-done:
		return nil
	case <-a.loopDone:
	case <-ctx.Done():
	}
	if claimed.CompareAndSwap(false, true) {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for the AM's event loop: %w", context.Cause(ctx))
		}
		return errJobTerminated
	}
	<-done
	return nil
}
