package storage

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	p := RetryPolicy{Attempts: 10, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := p.backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	for range 1000 {
		if j := jitter(time.Second); j < 800*time.Millisecond || j > 1200*time.Millisecond {
			t.Fatalf("jitter(1s) = %v, want within ±20%%", j)
		}
	}
}

func TestRetrier(t *testing.T) {
	transient := errors.New("transient")
	permanent := errors.New("permanent")
	classify := func(err error) class {
		switch {
		case errors.Is(err, transient):
			return class{transient: true, reconnect: true}
		case errors.Is(err, permanent):
			return class{kind: ErrPermission}
		}
		return class{}
	}
	fast := RetryPolicy{Attempts: 4, InitialBackoff: time.Microsecond, MaxBackoff: time.Microsecond}
	tests := []struct {
		name          string
		results       []error
		wantCalls     int
		wantKind      error
		wantReconnect int
	}{
		{name: "success", results: []error{nil}, wantCalls: 1},
		{name: "transient then success", results: []error{transient, transient, nil}, wantCalls: 3, wantReconnect: 2},
		{name: "permanent", results: []error{permanent}, wantCalls: 1, wantKind: ErrPermission},
		{name: "transient exhausted", results: []error{transient, transient, transient, transient, nil}, wantCalls: 4, wantKind: ErrUnavailable, wantReconnect: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reconnects := 0
			r := &retrier{policy: fast, log: slog.New(slog.NewTextHandler(io.Discard, nil)), classify: classify,
				reconnect: func() { reconnects++ }}
			calls := 0
			err := r.do(context.Background(), "stat", "file:///x", func(attempt int) error {
				calls++
				if attempt != calls {
					t.Fatalf("attempt %d on call %d", attempt, calls)
				}
				return tc.results[calls-1]
			})
			if calls != tc.wantCalls || reconnects != tc.wantReconnect {
				t.Fatalf("calls = %d, reconnects = %d; want %d, %d", calls, reconnects, tc.wantCalls, tc.wantReconnect)
			}
			if tc.wantKind == nil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			var se *Error
			if !errors.Is(err, tc.wantKind) || !errors.As(err, &se) || se.Attempts != tc.wantCalls || se.Op != "stat" || se.Path != "file:///x" {
				t.Fatalf("err = %#v, want an *Error of kind %v after %d attempts", err, tc.wantKind, tc.wantCalls)
			}
		})
	}
}

func TestRetrierStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &retrier{policy: RetryPolicy{Attempts: 1000, InitialBackoff: time.Hour, MaxBackoff: time.Hour},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), classify: func(error) class { return class{transient: true} }}
	calls := 0
	err := r.do(ctx, "list", "hdfs://nn/x", func(int) error {
		calls++
		cancel() // cancelled while the retrier would wait an hour
		return errors.New("connection refused")
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err = %v after %d calls, want context.Canceled after 1", err, calls)
	}
}
