package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// RequireSASL is Require for tests of authorization: the broker must have its SASL/PLAIN
// listener, whose user is subject to ACLs.
func RequireSASL(t testing.TB) *Env {
	t.Helper()
	e := Require(t)
	if e.SASLBootstrap == "" || e.SASLUser == "" {
		envFile.Missing(t, errMissingSASL)
	}
	return e
}

type saslError struct{}

func (saslError) Error() string {
	return "the broker has no SASL listener (restart it with test/kafka/down.sh && test/kafka/up.sh)"
}

var errMissingSASL = saslError{}

// SASLOpts are the client options of the SASL user.
func (e *Env) SASLOpts() []kgo.Opt {
	return []kgo.Opt{kgo.SASL(plain.Auth{User: e.SASLUser, Pass: e.SASLPassword}.AsMechanism())}
}

// Principal is the SASL user's ACL principal.
func (e *Env) Principal() string { return "User:" + e.SASLUser }

// Grant creates ACLs (as the super user of the PLAINTEXT listener) and fails t on error.
func (e *Env) Grant(t testing.TB, b *kadm.ACLBuilder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := e.Admin(t)
	b.AllowHosts() // every host: what CreateACLs grants, and what the describe below matches
	res, err := adm.CreateACLs(ctx, b)
	if err != nil {
		t.Fatalf("creating ACLs: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("creating ACL %+v: %v", r, r.Err)
		}
	}
	// The broker applies ACLs when it replays the metadata log: wait until it describes
	// every one of them, so the test does not race the authorizer.
	for {
		desc, err := adm.DescribeACLs(ctx, b)
		done := err == nil
		for _, d := range desc {
			if d.Err != nil || len(d.Described) == 0 {
				done = false
			}
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ACLs created but not in effect after 30s: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
