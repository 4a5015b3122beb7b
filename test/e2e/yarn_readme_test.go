package e2e

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNReadmeCommand runs the README's "Running on YARN" block as written, with only the
// cluster's addresses substituted (HADOOP_CONF_DIR and the binary's path): the AM and the
// TaskManagers resolve hdfs:/// through the shipped core-site.xml, the job commits the exact
// answer under hdfs:///tide/out, and tide run warns that the mini-cluster's NodeManagers share
// the node id localhost. tide run shows the upload of the binary (over 100 MB, so it goes up in
// several block sessions of the mini-cluster's 1 MiB blocks) and no storage warning: an upload
// session that failed and was resumed is retried out of the user's sight.
func TestYARNReadmeCommand(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	t.Setenv("HADOOP_CONF_DIR", env.ConfDir) // this test reads hdfs:///tide/out too
	block := yarnReadmeBlock(t)
	if !strings.Contains(block, "/etc/hadoop/conf") || !strings.Contains(block, "build/tide run") {
		t.Fatalf("the README's YARN block changed shape:\n%s", block)
	}
	script := strings.ReplaceAll(block, "/etc/hadoop/conf", env.ConfDir)
	script = strings.ReplaceAll(script, "build/tide", tideBin)

	root, err := storage.Open(context.Background(), env.URI+"/", storage.Options{User: currentUser()})
	if err != nil {
		t.Fatal(err)
	}
	clean := func() {
		for _, d := range []string{"tide/out", "tide/checkpoints"} {
			if err := root.Delete(context.Background(), d); err != nil && !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("deleting hdfs:///%s: %v", d, err)
			}
		}
	}
	clean()
	t.Cleanup(func() { clean(); root.Close() })

	out := runScript(t, t.TempDir(), os.Environ(), script, 5*time.Minute)
	t.Logf("README YARN command:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "FINISHED") || !strings.Contains(last, "SUCCEEDED") {
		t.Errorf("last line %q, want the application FINISHED and SUCCEEDED", last)
	}
	if !strings.Contains(out, "share a node id: localhost (") {
		t.Errorf("no warning that the NodeManagers share the node id localhost:\n%s", out)
	}
	if up := regexp.MustCompile(`(?m)^Uploading hdfs://\S+/tide \((\d+\.\d) MB\) \.\.\.\nUploaded (\d+\.\d) MB in `).FindStringSubmatch(out); up == nil || up[1] != up[2] {
		t.Errorf("tide run did not show the binary's upload (Uploading hdfs://…/tide (N MB) ... / Uploaded N MB in …):\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "storage") {
			t.Errorf("tide run showed a storage warning (retries that succeeded stay out of the terminal): %s", line)
		}
	}
	if strings.Contains(out, "checkpointing is off") {
		t.Errorf("the README's command sets an interval, yet tide run warned that checkpointing is off:\n%s", out)
	}
	testkit.CheckExactOutput(t, "hdfs:///tide/out", readmeJobArgs(t, block))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if left, err := root.List(ctx, "tide/checkpoints"); err != nil && !errors.Is(err, storage.ErrNotFound) || len(left) != 0 {
		t.Errorf("hdfs:///tide/checkpoints after the job finished: %v, %v; want its checkpoints deleted", left, err)
	}
}

// yarnReadmeBlock is the first ```sh block of the README's "Running on YARN" section.
func yarnReadmeBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Running on YARN\n")
	if !ok {
		t.Fatal(`README.md has no section "## Running on YARN"`)
	}
	_, after, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal("README's YARN section has no sh block")
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("README's YARN section: unterminated code block")
	}
	return block
}

// readmeJobArgs are the job's arguments in the block: the words after " -- ".
func readmeJobArgs(t *testing.T, block string) []string {
	t.Helper()
	_, args, ok := strings.Cut(strings.ReplaceAll(block, "\\\n", " "), " -- ")
	if !ok {
		t.Fatalf("no job arguments ( -- ) in the README's YARN block:\n%s", block)
	}
	return strings.Fields(strings.SplitN(args, "\n", 2)[0])
}
