package am

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/stream"
)

const testJobID = "00112233445566778899aabbccddeeff"

// restAM is an AM without TaskManagers serving its REST API; the job waits for resources.
type restAM struct {
	am   *AM
	base string // http://127.0.0.1:port
	stop func() Result
}

type restAMOptions struct {
	reactive  bool
	bind      string // default 127.0.0.1
	token     string
	tokenFile string
	dynamic   []string
	logger    *slog.Logger // testkit.Logger() if nil
	rpcBind   string       // default 127.0.0.1
	secret    clusterauth.Secret
	// endless runs a job that does not finish by itself, for tests that register
	// TaskManagers and then keep asking the AM (the default job ends within a second).
	endless bool
}

func startRESTAM(t testing.TB, o restAMOptions) *restAM {
	t.Helper()
	a, err := newRESTAM(t, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, err := a.Run(ctx)
		if err != nil {
			t.Errorf("AM: %v", err)
		}
		done <- res
	}()
	var res Result
	stopped := false
	stop := func() Result {
		if !stopped {
			cancel()
			res, stopped = <-done, true
		}
		return res
	}
	t.Cleanup(func() { stop() })
	_, port, _ := net.SplitHostPort(a.RESTAddr())
	return &restAM{am: a, base: "http://127.0.0.1:" + port, stop: stop}
}

func newRESTAM(t testing.TB, o restAMOptions) (*AM, error) {
	t.Helper()
	build, ok := stream.Lookup(examples.CheckableCountName)
	if !ok {
		t.Fatalf("job %s not registered", examples.CheckableCountName)
	}
	jobArgs := []string{"--records", "1000", "--parallelism", "2", "--output", t.TempDir()}
	if o.endless {
		jobArgs = []string{"--records", "1000000000", "--rate", "100", "--parallelism", "2", "--output", t.TempDir()}
	}
	job, err := build(jobArgs)
	if err != nil {
		t.Fatal(err)
	}
	dyn := o.dynamic
	if o.reactive {
		dyn = append([]string{"execution-mode=reactive"}, dyn...)
	}
	cfg, _, err := conf.Load("", dyn)
	if err != nil {
		t.Fatal(err)
	}
	logger := o.logger
	if logger == nil {
		logger = testkit.Logger()
	}
	bind := o.bind
	if bind == "" {
		bind = "127.0.0.1"
	}
	rpcBind := o.rpcBind
	if rpcBind == "" {
		rpcBind = "127.0.0.1"
	}
	rpcLn, err := net.Listen("tcp", net.JoinHostPort(rpcBind, "0"))
	if err != nil {
		t.Fatal(err)
	}
	restLn, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{
		JobID: testJobID, JobName: examples.CheckableCountName, JobArgs: jobArgs, Job: job,
		Options: SchedulerOptions(cfg), Conf: cfg.Map(), HeartbeatInterval: time.Second,
		Logger: logger, RPCListener: rpcLn, RESTListener: restLn,
		RESTAuthToken: o.token, RESTAuthTokenFile: o.tokenFile, InternalSecret: o.secret,
	})
	if err != nil {
		rpcLn.Close()
		restLn.Close()
	}
	return a, err
}

// call sends one request and returns the status, the headers and the body.
func (r *restAM) call(t testing.TB, method, path, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	code, hdr, data, err := testkit.Send(context.Background(), method, r.base+path, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return code, hdr, data
}

// errorsOf decodes Flink's error body, failing the test when it is not one.
func errorsOf(t testing.TB, body []byte) []string {
	t.Helper()
	var e struct {
		Errors []string `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || len(e.Errors) == 0 {
		t.Fatalf("body %s is not {\"errors\": [...]}: %v", body, err)
	}
	return e.Errors
}

// waitUntil polls cond; the deadline only guards against hangs.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serve calls h directly, without a server.
func serve(h http.Handler, method, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
