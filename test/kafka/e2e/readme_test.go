package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// TestReadmeReadingFromKafka runs the README's "Reading from Kafka" commands as written,
// from the repository root: make build kafka-up (which reuses a running broker), topics,
// three keys in, the job, three exactly-once counts out.
func TestReadmeReadingFromKafka(t *testing.T) {
	kafkatest.Require(t) // the README's broker is the one make kafka-up starts at the root
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	script := readmeBlock(t, filepath.Join(root, "README.md"), "## Reading from Kafka")
	envFile := filepath.Join(root, ".cache", "kafka", "env")
	if _, err := os.Stat(envFile); err != nil {
		// make kafka-up will start a broker for the README: stop it afterwards.
		t.Cleanup(func() { exec.Command("make", "-C", root, "kafka-down").Run() })
	} else {
		deleteTopics(t, envFile, "keys", "counts")
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KAFKA_ENV=") && !strings.HasPrefix(kv, "TIDE_KAFKA_ENV=") {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README commands failed: %v\n---- script\n%s---- output\n%s", err, script, out)
	}
	for _, want := range []string{"apple\tapple,1", "apple\tapple,2", "pear\tpear,1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's consumer did not print %q:\n%s", want, out)
		}
	}
}

// readmeBlock returns the first ```sh block of the README section starting with heading.
func readmeBlock(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	_, after, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatalf("README section %q has no sh block", heading)
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatalf("README section %q: unterminated code block", heading)
	}
	return block
}

// deleteTopics removes the README's topics from an earlier run, so it starts fresh.
func deleteTopics(t *testing.T, envFile string, topics ...string) {
	t.Helper()
	f, err := os.Open(envFile)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kafkatest.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.DeleteTopics(t.Context(), topics...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp {
		if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("deleting topic %s: %v", r.Topic, r.Err)
		}
	}
	// Deletion is asynchronous: wait until the topics are gone.
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := adm.ListTopics(t.Context(), topics...)
		gone := err == nil
		for _, td := range d {
			if td.Err == nil {
				gone = false
			}
		}
		if gone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topics %v still there a minute after deleting them", topics)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
