package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNUploadAcrossDatanodeRestart restarts the HDFS datanode while tide run uploads the
// job binary (over 100 MB) to the staging directory: the broken upload session is resumed from
// what the datanode acknowledged, the application runs to the exact answer, and the terminal
// shows the upload's progress but no warning about the retry (at --log-level debug it shows as
// a debug line, which proves the retry happened).
func TestYARNUploadAcrossDatanodeRestart(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	env.Disrupt(t)
	rel := scratchName("yarn-upload")
	hdfsDeletedAfter(t, env, rel)
	jobArgs := []string{"--records", "2000", "--keys", "7", "--output", "hdfs:///" + rel}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tideBin, yarnRunArgs(nil, jobArgs)...)
	cmd.Env = append(hadoopEnv(env), "TIDE_LOG_LEVEL=debug")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	restarted := make(chan error, 1)
	app := ""
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		out.WriteString(l + "\n")
		if strings.HasPrefix(l, "Uploading ") && strings.Contains(l, "/tide (") {
			go func() { restarted <- env.RestartDatanode(ctx) }()
		}
		if m := submittedRE.FindStringSubmatch(l); m != nil {
			app = m[1]
		}
	}
	err = cmd.Wait()
	if app != "" && err != nil {
		killApp(t, env, app)
	}
	text := out.String()
	if err != nil {
		t.Fatalf("tide run: %v\n%s", err, text)
	}
	select {
	case rerr := <-restarted:
		if rerr != nil {
			t.Fatalf("RestartDatanode: %v", rerr)
		}
	default:
		t.Fatalf("tide run never printed the binary's Uploading line, so the datanode was not restarted:\n%s", text)
	}
	var retried bool
	var shown strings.Builder // what the terminal shows at the default level, and the retries
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, "level=DEBUG") || strings.Contains(l, "upload session") || strings.Contains(l, "recovering its file") {
			shown.WriteString(l + "\n")
		}
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "storage") {
			t.Errorf("tide run showed a storage warning for a retry that succeeded: %s", l)
		}
		if strings.Contains(l, "level=DEBUG") && strings.Contains(l, "upload session failed") {
			retried = true
		}
	}
	if !retried {
		t.Errorf("no upload session failed while the datanode restarted (no debug line \"upload session failed\"):\n%s", text)
	}
	t.Logf("tide run (debug lines other than the upload's left out):\n%s", shown.String())
	if !strings.Contains(text, "\nUploaded ") {
		t.Errorf("tide run did not report the finished upload:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "FINISHED") || !strings.Contains(last, "SUCCEEDED") {
		t.Errorf("last line %q, want the application FINISHED and SUCCEEDED", last)
	}
	testkit.CheckExactOutput(t, env.URI+"/"+rel, jobArgs)
}
