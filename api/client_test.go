package api_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidestream/tide/api"
)

func TestNewClientRefusesBadAddresses(t *testing.T) {
	for _, bad := range []string{"", "ftp://x:1", "host", "http://", "http://host"} {
		if _, err := api.NewClient(api.Config{Address: bad}); err == nil {
			t.Errorf("NewClient(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"localhost:8081", "http://127.0.0.1:1", "https://am.example:443/prefix"} {
		if _, err := api.NewClient(api.Config{Address: good}); err != nil {
			t.Errorf("NewClient(%q): %v", good, err)
		}
	}
}

func TestClientErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/overview":
			w.WriteHeader(500)
			io.WriteString(w, "boom")
		case "/taskmanagers":
			io.WriteString(w, "<html>")
		case "/jobs/overview":
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"errors": ["missing token", "see rest.auth.token"]}`)
		}
	}))
	defer srv.Close()
	c, err := api.NewClient(api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Overview(t.Context())
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != 500 || !strings.Contains(err.Error(), "answered 500: boom") {
		t.Errorf("plain error: %v", err)
	}
	if _, err := c.TaskManagers(t.Context()); err == nil || !strings.Contains(err.Error(), "not the expected JSON") {
		t.Errorf("non-JSON answer: %v", err)
	}
	_, err = c.Jobs(t.Context())
	if !api.IsStatus(err, http.StatusUnauthorized) || !errors.As(err, &se) ||
		strings.Join(se.Messages, "|") != "missing token|see rest.auth.token" || !strings.Contains(err.Error(), "--token") {
		t.Errorf("401: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err = api.NewClient(api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Jobs(t.Context())
	var ue *api.UnreachableError
	if !errors.As(err, &ue) || ue.Address != addr {
		t.Errorf("closed port: %v, want an UnreachableError", err)
	}
}

func TestAsyncOperationFailure(t *testing.T) {
	tests := []struct {
		name string
		op   api.AsyncOperation
		done bool
		want string
	}{
		{"in progress", api.AsyncOperation{Status: api.QueueStatus{ID: api.OperationInProgress}}, false, ""},
		{"completed", api.AsyncOperation{Status: api.QueueStatus{ID: api.OperationCompleted}, Operation: &api.OperationResult{CheckpointID: 3}}, true, ""},
		{"tide failed", api.AsyncOperation{Status: api.QueueStatus{ID: api.OperationFailed},
			Operation: &api.OperationResult{FailureCause: &api.FailureCause{Class: "tide.checkpoint.failed", StackTrace: "disk full\n\tat x"}}}, true, "disk full"},
		{"flink failed", api.AsyncOperation{Status: api.QueueStatus{ID: api.OperationCompleted},
			Operation: &api.OperationResult{FailureCause: &api.FailureCause{Class: "java.lang.Exception"}}}, true, "java.lang.Exception"},
		{"failed without cause", api.AsyncOperation{Status: api.QueueStatus{ID: api.OperationFailed}}, true, "status FAILED"},
	}
	for _, tt := range tests {
		if got := tt.op.Done(); got != tt.done {
			t.Errorf("%s: Done() = %v", tt.name, got)
		}
		if got := tt.op.Failure(); got != tt.want {
			t.Errorf("%s: Failure() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
