package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// TestKafkaCountBadInput: unreachable brokers and a missing topic fail the job (FAILED,
// with the source's error as the cause); a transaction timeout shorter than the checkpoint
// interval is refused before anything starts.
func TestKafkaCountBadInput(t *testing.T) {
	e := kafkatest.Require(t)
	out := e.CreateTopic(t, 1)
	missing := kafkatest.UniqueName(t)
	failing := []struct {
		name    string
		brokers string
		input   string
		want    []string
	}{
		{"unreachable brokers", "127.0.0.1:1", out,
			[]string{"job KafkaCount ended FAILED", `kafka source "kafka-in"`, "on brokers 127.0.0.1:1", "connection refused"}},
		{"missing topic", e.Bootstrap, missing,
			[]string{"job KafkaCount ended FAILED", `kafka source "kafka-in"`, fmt.Sprintf("topic %q does not exist", missing)}},
	}
	for _, tc := range failing {
		t.Run(tc.name, func(t *testing.T) {
			c := startLocal(t, standalone.LocalOptions{JobName: examples.KafkaCountName, TaskManagers: 1,
				JobArgs: []string{"--brokers", tc.brokers, "--input", tc.input, "--output", out},
				Dynamic: append(testkit.Reactive(t.TempDir(), "1 s"), "restart-strategy.type=none")})
			select {
			case <-c.AMDone():
			case <-time.After(testkit.WaitDeadline):
				t.Fatal("the job did not fail")
			}
			err := c.AMErr()
			if err == nil {
				t.Fatal("the AM exited cleanly, want the job FAILED")
			}
			log := amLog(t, c)
			for _, w := range tc.want {
				if !strings.Contains(log, w) {
					t.Errorf("the AM's log lacks %q (exit: %v)", w, err)
				}
			}
		})
	}

	// Only with the harness's SASL listener: a user who may read and write the topics but
	// not use the sink's transactional ids.
	t.Run("unauthorised transactional id", func(t *testing.T) {
		e := kafkatest.RequireSASL(t)
		in := e.CreateTopic(t, 1)
		group := kafkatest.UniqueName(t)
		e.Grant(t, kadm.NewACLs().Allow(e.Principal()).Topics(in, out).Operations(kadm.OpRead, kadm.OpWrite, kadm.OpDescribe))
		e.Grant(t, kadm.NewACLs().Allow(e.Principal()).Groups(group).Operations(kadm.OpRead, kadm.OpDescribe))
		prefix := kafkatest.UniqueName(t)
		c := startLocal(t, standalone.LocalOptions{JobName: examples.KafkaCountName, TaskManagers: 1,
			JobArgs: []string{"--brokers", e.SASLBootstrap, "--sasl-plain", e.SASLUser + ":" + e.SASLPassword,
				"--input", in, "--output", out, "--group", group, "--transactional-id-prefix", prefix},
			Dynamic: append(testkit.Reactive(t.TempDir(), "1 s"), "restart-strategy.type=none")})
		select {
		case <-c.AMDone():
		case <-time.After(testkit.WaitDeadline):
			t.Fatal("the job did not fail")
		}
		if c.AMErr() == nil {
			t.Fatal("the AM exited cleanly, want the job FAILED")
		}
		log := amLog(t, c)
		for _, w := range []string{"job KafkaCount ended FAILED", `kafka sink \"kafka-out\"`, prefix + "-0-", "is not authorized",
			"TRANSACTIONAL_ID_AUTHORIZATION_FAILED"} {
			if !strings.Contains(log, w) {
				t.Errorf("the AM's log lacks %q", w)
			}
		}
	})

	t.Run("transaction timeout below the checkpoint interval", func(t *testing.T) {
		dir := t.TempDir()
		outp, err := testkit.RunCommand(t.Context(), time.Minute, nil, tideBin, "jobmanager",
			"-Dstate.checkpoints.dir=file://"+dir, "-Dexecution.checkpointing.interval=30 s",
			"--job-classname", examples.KafkaCountName, "--",
			"--brokers", e.Bootstrap, "--input", out, "--output", out, "--transaction-timeout", "10s")
		if err == nil {
			t.Fatalf("the job was accepted:\n%s", outp)
		}
		for _, w := range []string{"job KafkaCount not submitted", `kafka sink "kafka-out"`,
			"transaction timeout 10s is not longer than the checkpoint interval 30s"} {
			if !strings.Contains(outp, w) {
				t.Errorf("output lacks %q:\n%s", w, outp)
			}
		}
	})
}

func amLog(t *testing.T, c *standalone.LocalCluster) string {
	t.Helper()
	b, err := readFile(c.LogDir() + "/jobmanager.log")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
