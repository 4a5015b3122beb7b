package am

import (
	"net/http"
	"strings"
	"testing"
)

// TestRESTServesWebPage: the REST port answers GET / with the job's page and /ui/ with its
// files, while every other unknown path keeps Flink's JSON 404.
func TestRESTServesWebPage(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	tests := []struct {
		method, path string
		code         int
		contentType  string
		contains     string
	}{
		{"GET", "/", http.StatusOK, "text/html", `src="ui/app.js"`},
		{"HEAD", "/", http.StatusOK, "text/html", ""},
		{"GET", "/ui/app.js", http.StatusOK, "text/javascript", "jobs/overview"},
		{"GET", "/ui/style.css", http.StatusOK, "text/css", ".topbar"},
		{"GET", "/ui/no-such-file.js", http.StatusNotFound, "text/plain", "Not found"},
		{"GET", "/no-such-path", http.StatusNotFound, "application/json", `"Not found: GET /no-such-path"`},
		{"POST", "/", http.StatusNotFound, "application/json", `"Not found: POST /"`},
		{"GET", "/index.html", http.StatusNotFound, "application/json", "Not found"},
		{"GET", "/jobs/overview", http.StatusOK, "application/json", testJobID},
	}
	for _, tt := range tests {
		code, hdr, body := r.call(t, tt.method, tt.path, "")
		if code != tt.code || !strings.HasPrefix(hdr.Get("Content-Type"), tt.contentType) || !strings.Contains(string(body), tt.contains) {
			t.Errorf("%s %s = %d %q %.200s, want %d %s containing %q", tt.method, tt.path, code, hdr.Get("Content-Type"), body, tt.code, tt.contentType, tt.contains)
		}
	}
}
