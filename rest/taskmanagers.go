package rest

import (
	"context"
	"fmt"
	"net/http"

	"github.com/tidestream/tide/api"
)

// pendingLister is a backend that knows the requested TaskManagers that have not
// registered yet.
type pendingLister interface {
	PendingWorkers(ctx context.Context) ([]api.PendingWorker, error)
}

// getTaskManagers serves GET /taskmanagers: the registered TaskManagers, and in
// pendingWorkers the requested ones still on their way, with the reason they wait.
func (s *server) getTaskManagers(w http.ResponseWriter, r *http.Request) {
	tms, err := s.b.TaskManagers(r.Context())
	if tms == nil {
		tms = []api.TaskManager{}
	}
	pending := []api.PendingWorker{}
	if pl, ok := s.b.(pendingLister); ok && err == nil {
		var p []api.PendingWorker
		if p, err = pl.PendingWorkers(r.Context()); p != nil {
			pending = p
		}
	}
	answer(w, api.TaskManagers{TaskManagers: tms, PendingWorkers: pending}, err)
}

// getTaskManager serves GET /taskmanagers/:taskmanagerid.
func (s *server) getTaskManager(w http.ResponseWriter, r *http.Request) {
	tms, err := s.b.TaskManagers(r.Context())
	if err != nil {
		writeFailure(w, err)
		return
	}
	id := r.PathValue("tmid")
	for _, tm := range tms {
		if tm.ID == id {
			writeJSON(w, http.StatusOK, tm)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("TaskManager %s not found: GET /taskmanagers lists the registered ones", id))
}
