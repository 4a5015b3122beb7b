package rest

import (
	"fmt"
	"net/http"

	"github.com/tidestream/tide/api"
)

// getTaskManagers serves GET /taskmanagers.
func (s *server) getTaskManagers(w http.ResponseWriter, r *http.Request) {
	tms, err := s.b.TaskManagers(r.Context())
	if tms == nil {
		tms = []api.TaskManager{}
	}
	answer(w, api.TaskManagers{TaskManagers: tms}, err)
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
