package am

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/tm/worker"
)

var (
	secretA = clusterauth.Secret("rpc-auth-test-secret-AAAAAAAA")
	secretB = clusterauth.Secret("rpc-auth-test-secret-BBBBBBBB")
)

// TestRPCOffLoopbackNeedsSecret: an AM whose RPC server listens on every interface refuses to
// start without the internal secret, naming the keys that set it, as the REST API does for its
// token; with a secret it starts.
func TestRPCOffLoopbackNeedsSecret(t *testing.T) {
	_, err := newRESTAM(t, restAMOptions{rpcBind: "0.0.0.0"})
	if !errors.Is(err, clusterauth.ErrSecretRequired) || !strings.Contains(err.Error(), "security.internal.secret-file") ||
		!strings.Contains(err.Error(), "jobmanager.rpc.address") {
		t.Fatalf("New with RPC on 0.0.0.0 and no secret = %v; want an error naming jobmanager.rpc.address and security.internal.secret-file", err)
	}
	a, err := newRESTAM(t, restAMOptions{rpcBind: "0.0.0.0", secret: secretA})
	if err != nil {
		t.Fatalf("New with RPC on 0.0.0.0 and a secret: %v", err)
	}
	a.cfg.RPCListener.Close()
	a.cfg.RESTListener.Close()
}

// runTM runs a real TaskManager against addr until it returns or the test ends.
func runTM(t *testing.T, addr, id string, secret clusterauth.Secret) (<-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- worker.Run(ctx, worker.Config{AMAddress: addr, ID: id, NodeID: "node-" + id, Slots: 1,
			ConnectTimeout: 20 * time.Second, Secret: secret, Logger: testkit.Logger().With("process", id)})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
			t.Errorf("TaskManager %s did not stop", id)
		}
	})
	return done, cancel
}

func waitTMErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the TaskManager neither registered nor gave up")
		return nil
	}
}

// TestRPCSecretRefusesOthers runs an AM bound off loopback with a secret and real
// TaskManagers: one without a secret and one with another secret are refused at once with
// the reason on both ends (the TaskManager exits with ErrRejected, the AM logs the refusal);
// one with the same secret registers.
func TestRPCSecretRefusesOthers(t *testing.T) {
	logs := &syncBuffer{}
	r := startRESTAM(t, restAMOptions{rpcBind: "0.0.0.0", secret: secretA, endless: true,
		logger: slog.New(slog.NewTextHandler(logs, nil))})
	_, port, _ := net.SplitHostPort(r.am.RPCAddr())
	addr := net.JoinHostPort("127.0.0.1", port)

	for _, tc := range []struct {
		name   string
		secret clusterauth.Secret
		want   string
	}{
		{"missing", nil, "sent no proof"},
		{"wrong", secretB, "does not match the AM's internal secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, _ := runTM(t, addr, "tm-"+tc.name, tc.secret)
			err := waitTMErr(t, done)
			if !errors.Is(err, worker.ErrRejected) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "security.internal.secret-file") {
				t.Fatalf("TaskManager with the %s secret ended with %v; want ErrRejected saying %q and naming security.internal.secret-file", tc.name, err, tc.want)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(logs.String(), tc.want) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if text := logs.String(); !strings.Contains(text, "refusing an unauthenticated TaskManager connection") || !strings.Contains(text, tc.want) {
				t.Fatalf("the AM did not log the refusal:\n%s", text)
			}
		})
	}

	done, _ := runTM(t, addr, "tm-good", secretA)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, body := r.call(t, "GET", "/taskmanagers", "")
		if strings.Contains(string(body), "tm-good") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("TaskManager with the right secret ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("TaskManager with the right secret never registered: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(string(body(r, t)), "tm-missing") || strings.Contains(string(body(r, t)), "tm-wrong") {
		t.Fatal("a refused TaskManager is listed")
	}
}

func body(r *restAM, t *testing.T) []byte {
	_, _, b := r.call(t, "GET", "/taskmanagers", "")
	return b
}

// TestRPCTaskManagerRefusesAMWithoutSecret: a TaskManager that holds a secret does not serve
// an AM that cannot prove it (here a loopback AM without one), and leaves before registering:
// the AM never counts its slot (it once did, deployed onto it as the next TaskManager came,
// and the job failed); without secrets on both sides, loopback keeps working.
func TestRPCTaskManagerRefusesAMWithoutSecret(t *testing.T) {
	logs := &syncBuffer{}
	r := startRESTAM(t, restAMOptions{endless: true, logger: slog.New(slog.NewTextHandler(logs, nil))})
	done, _ := runTM(t, r.am.RPCAddr(), "tm-strict", secretA)
	err := waitTMErr(t, done)
	if !errors.Is(err, worker.ErrRejected) || !strings.Contains(err.Error(), "did not prove it holds the internal secret") {
		t.Fatalf("TaskManager with a secret against an AM without one ended with %v", err)
	}
	if strings.Contains(logs.String(), "taskmanager=tm-strict") {
		t.Fatalf("the AM registered the TaskManager that refused it:\n%s", logs.String())
	}
	done, _ = runTM(t, r.am.RPCAddr(), "tm-open", nil)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(string(body(r, t)), "tm-open") {
		select {
		case err := <-done:
			t.Fatalf("TaskManager without a secret on loopback ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("TaskManager without a secret on loopback never registered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "tm-strict") {
		t.Fatalf("the AM counted the TaskManager that refused it:\n%s", logs.String())
	}
}
