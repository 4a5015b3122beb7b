package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestWriteYourOwnJob runs the README's "Write your own job" commands as they are written: a
// module outside tide's, with examples/custom-job's code and a replace to this checkout, is
// built into a tide binary with its own job, which runs on a local cluster and then submits
// itself to the YARN mini-cluster. Both runs must commit exactly the alerts the job's rule
// gives.
func TestWriteYourOwnJob(t *testing.T) {
	local, yarnBlock := readmeBlocks(t, "## Write your own job")
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Offline: the module cache holds tide's dependencies and go.sum their checksums.
	// .ci/go-modules-for-own-job.sh (make test runs it first) fetches what such a build reads.
	env := append(os.Environ(), "TIDE_SRC="+src, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=")
	out := runScript(t, dir, env, local, 10*time.Minute)
	job := filepath.Join(dir, "frauddetection")
	if !strings.Contains(out, "FraudDetection") {
		t.Fatalf("list-jobs of the user's binary does not show FraudDetection:\n%s", out)
	}
	checkAlerts(t, filepath.Join(job, "alerts"), 4, 5, 20000)
	gomod, err := os.ReadFile(filepath.Join(job, "go.mod"))
	if err != nil || !strings.Contains(string(gomod), "replace github.com/tidestream/tide => "+src) {
		t.Fatalf("the user's go.mod does not replace tide with the checkout %s: %v\n%s", src, err, gomod)
	}

	t.Run("yarn", func(t *testing.T) {
		h := hadooptest.RequireYARN(t)
		env := append(hadoopEnv(h), "GOFLAGS=")
		runScript(t, job, env, yarnBlock, 5*time.Minute)
		checkAlerts(t, filepath.Join(job, "alerts-yarn"), 4, 5, 20000)
	})
}

// readmeBlocks returns the first and the last ```sh block of the README section that
// starts with heading.
func readmeBlocks(t *testing.T, heading string) (first, last string) {
	t.Helper()
	blocks := readmeFenced(t, heading, "sh")
	if len(blocks) < 2 {
		t.Fatalf("README section %q: want a local and a YARN sh block, found %d", heading, len(blocks))
	}
	return blocks[0], blocks[len(blocks)-1]
}

// runScript runs script with bash -e in dir and returns its output.
func runScript(t *testing.T, dir string, env []string, script string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		hint := ""
		if strings.Contains(string(out), "module lookup disabled by GOPROXY=off") {
			hint = "\nThe Go module cache lacks a module this offline build reads: .ci/go-modules-for-own-job.sh fetches them (make test runs it first)."
		}
		t.Fatalf("README commands failed: %v\n---- script\n%s---- output\n%s%s", err, script, out, hint)
	}
	return string(out)
}

// checkAlerts compares the alerts committed in dir with the exact answer.
func checkAlerts(t *testing.T, dir string, partitions, accounts int, n int64) {
	t.Helper()
	got, err := examples.ReadCommittedOutput(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := expectedAlerts(partitions, accounts, n)
	if len(want) == 0 {
		t.Fatal("the expected answer has no alerts: the test proves nothing")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("alerts in %s differ from the exact answer (%d lines, want %d):\n got %.400q\nwant %.400q", dir, len(got), len(want), got, want)
	}
}

// expectedAlerts is the exact answer of examples/custom-job's FraudDetection, written here
// again from its documented rule (the job is a module of its own that tide cannot import):
// partition p carries accounts p*A .. p*A+A-1 in turn, payment seq of partition p is
// splitmix64(p<<40 | seq) mod 100000 cents, and a payment above $900 right after one below
// $10 on the same account raises "ALERT acct-N seq=S amount=D.CC".
func expectedAlerts(partitions, accounts int, n int64) []string {
	var out []string
	for p := range partitions {
		small := map[int64]bool{}
		for seq := range n {
			acct := int64(p*accounts) + seq%int64(accounts)
			x := uint64(p)<<40 | uint64(seq) + 0x9E3779B97F4A7C15
			x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
			x = (x ^ x>>27) * 0x94D049BB133111EB
			cents := int64((x ^ x>>31) % 100_000)
			if small[acct] && cents > 90_000 {
				out = append(out, fmt.Sprintf("ALERT acct-%d seq=%d amount=%d.%02d", acct, seq, cents/100, cents%100))
			}
			small[acct] = cents < 1_000
		}
	}
	slices.Sort(out)
	return out
}
