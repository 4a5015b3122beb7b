package am

import (
	"net/http"

	"github.com/tidestream/tide/rest"
)

// The AM is the REST API's backend: package rest routes, decodes and answers; the AM's
// exported query and command methods (rest_<resource>.go) read and change the job.
var _ rest.Backend = (*AM)(nil)

// JobID is the id of the AM's job.
func (a *AM) JobID() string { return a.cfg.JobID }

// restHandler is the REST API and the web page of this AM.
func (a *AM) restHandler() http.Handler { return rest.NewHandler(a, a.api.auth) }

// webURL is where the job's web page is served, "" without a REST API.
func (a *AM) webURL() string {
	if a.RESTAddr() == "" {
		return ""
	}
	return "http://" + a.RESTAddr() + "/"
}
