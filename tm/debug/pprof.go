// Package debug serves a TaskManager's Go profiles (net/http/pprof) when
// taskmanager.debug.pprof.address is set: CPU (/debug/pprof/profile), allocations
// (/debug/pprof/allocs), heap, goroutines, mutex and block profiles of the running process.
// It is off unless configured, and only ever listens on loopback: profiles expose the
// process's internals and the endpoint has no authentication.
package debug

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/tidestream/tide/internal/clusterauth"
)

// PprofKey is the configuration key of the endpoint's address.
const PprofKey = "taskmanager.debug.pprof.address"

// ServePprof listens on addr (host:port on loopback; port 0 picks one) and serves the pprof
// handlers under /debug/pprof/ until ctx ends. It returns the address it listens on.
func ServePprof(ctx context.Context, addr string, log *slog.Logger) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", PprofKey, addr, err)
	}
	if !clusterauth.IsLoopback(ln.Addr()) {
		_ = ln.Close()
		return "", fmt.Errorf("%s %q: the profiling endpoint has no authentication and listens on loopback only (use 127.0.0.1:<port>)", PprofKey, addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof endpoint stopped", "address", ln.Addr().String(), "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Info("pprof endpoint serving", "address", "http://"+ln.Addr().String()+"/debug/pprof/")
	return ln.Addr().String(), nil
}
