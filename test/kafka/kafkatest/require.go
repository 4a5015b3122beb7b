package kafkatest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Require returns the running broker, or skips t (fails it with TIDE_REQUIRE_KAFKA=1). It
// checks that the broker answers a metadata request, so a stale env file is caught here.
func Require(t testing.TB) *Env {
	t.Helper()
	e, err := Load()
	if err != nil {
		envFile.Missing(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Ping(ctx); err != nil {
		envFile.Missing(t, fmt.Errorf("env file %s is stale: %w", e.Path, err))
	}
	return e
}

// Client opens a franz-go client on the broker with opts added.
func (e *Env) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.Bootstrap)}, opts...)...)
}

// Ping lists the brokers once.
func (e *Env) Ping(ctx context.Context) error {
	cl, err := e.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = kadm.NewClient(cl).ListBrokers(ctx)
	return err
}
