package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// checkPageThroughYARNProxy reads the job's web page, one of its scripts and the REST API
// it reads through the ResourceManager's web proxy (/proxy/<application id>/), where the
// application's tracking URL leads a person.
func checkPageThroughYARNProxy(t *testing.T, env *hadooptest.Env, app, jid string) {
	t.Helper()
	if env.YARNWebApp == "" {
		t.Fatalf("the mini-cluster's env file %s has no YARN_RM_WEBAPP_ADDRESS", env.Path)
	}
	base := "http://" + env.YARNWebApp + "/proxy/" + app + "/"
	for _, tt := range []struct{ path, contentType, contains string }{
		{"", "text/html", `src="ui/app.js"`},
		{"ui/app.js", "text/javascript", "jobs/overview"},
		{"jobs/overview", "application/json", jid},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), testkit.RequestTimeout)
		code, hdr, body, err := testkit.Send(ctx, http.MethodGet, base+tt.path, "")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), tt.contentType) || !strings.Contains(string(body), tt.contains) {
			t.Fatalf("GET %s through YARN's web proxy = %d %q %.300s; want %s containing %q", base+tt.path, code,
				hdr.Get("Content-Type"), body, tt.contentType, tt.contains)
		}
	}
	t.Logf("the web page answers through YARN's web proxy at %s", base)
}
