package tidecli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tidestream/tide/api"
)

// progress follows a job through its REST API and prints one line whenever what a user
// cares about changes: the job status, the parallelism of its vertices, the number of
// TaskManagers; and one for every new failure, saying why the job restarts. Every few
// seconds it also shows the newest line a print sink wrote, so `tide run --target local`
// shows the job working, not only where its logs are.
type progress struct {
	out      io.Writer
	logDir   string
	client   *api.Client
	last     string
	lastOut  string
	failures failureReporter
}

func newProgress(out io.Writer, restAddr, logDir string) (*progress, error) {
	client, err := api.NewClient(api.Config{Address: restAddr, HTTPClient: &http.Client{Timeout: 2 * time.Second}})
	if err != nil {
		return nil, fmt.Errorf("following the local AM: %w", err)
	}
	return &progress{out: out, logDir: logDir, client: client}, nil
}

// run polls until ctx ends.
func (p *progress) run(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	outputEvery := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		line, jobID, ok := p.describe(ctx)
		if ok && line != p.last {
			p.last = line
			fmt.Fprintf(p.out, "%s  %s\n", time.Now().Format("15:04:05"), termSafe(line))
		}
		if line, ok := p.newFailure(ctx, jobID); ok {
			fmt.Fprintf(p.out, "%s    failure: %s\n", time.Now().Format("15:04:05"), termSafe(line))
		}
		if outputEvery++; outputEvery%10 == 0 {
			if line := newestSinkLine(p.logDir); line != "" && line != p.lastOut {
				p.lastOut = line
				fmt.Fprintf(p.out, "%s    output: %s\n", time.Now().Format("15:04:05"), termSafe(line))
			}
		}
	}
}

// describe summarises the job in one line and returns its id, or reports false while the
// AM does not answer.
func (p *progress) describe(ctx context.Context) (string, string, bool) {
	jobs, err := p.client.Jobs(ctx)
	if err != nil || len(jobs) == 0 {
		return "", "", false
	}
	job := jobs[0]
	details, err := p.client.Job(ctx, job.JID)
	if err != nil {
		return "", job.JID, false
	}
	cluster, err := p.client.Overview(ctx)
	if err != nil {
		return "", job.JID, false
	}
	parts := make([]string, 0, len(details.Vertices))
	for _, v := range details.Vertices {
		parts = append(parts, fmt.Sprintf("%s=%d", v.Name, v.Parallelism))
	}
	sort.Strings(parts)
	return fmt.Sprintf("job %-11s parallelism %s  (%d TaskManagers, %d slots)",
		job.State, strings.Join(parts, " "), cluster.TaskManagers, cluster.SlotsTotal), job.JID, true
}

// newFailure describes job jobID's newest failure if it was not printed yet
// (failureReporter).
func (p *progress) newFailure(ctx context.Context, jobID string) (string, bool) {
	if jobID == "" {
		return "", false
	}
	e, ok, _, err := p.client.NewestException(ctx, jobID)
	if err != nil || !ok {
		return "", false
	}
	return p.failures.line(e)
}

// sinkLine matches what a print sink writes: "<subtask>> <record>".
var sinkLine = regexp.MustCompile(`^\d+> `)

// newestSinkLine returns the last print-sink line of the most recently written
// TaskManager log in logDir, or "" when there is none.
func newestSinkLine(logDir string) string {
	logs, _ := filepath.Glob(filepath.Join(logDir, "taskmanager-*.log"))
	var newest string
	var newestMod time.Time
	for _, l := range logs {
		if st, err := os.Stat(l); err == nil && st.ModTime().After(newestMod) {
			newest, newestMod = l, st.ModTime()
		}
	}
	return lastLogLine(newest, 64<<10, sinkLine.MatchString)
}

// lastLogLine returns the last line among the final tail bytes of the log at path that
// keep accepts, "" when there is none (or the log cannot be read).
func lastLogLine(path string, tail int64, keep func(string) bool) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		_, _ = f.Seek(st.Size()-tail, io.SeekStart)
	}
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if keep(sc.Text()) {
			last = sc.Text()
		}
	}
	return last
}
