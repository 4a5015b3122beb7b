package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// hdfsJob is a job whose checkpoints live on the mini-cluster's HDFS, run by processes
// this test starts itself, so that the AM can be SIGKILLed and a new AM started for the
// same job id on the same ports, as a user (or YARN's next attempt) would. TaskManagers
// are not restarted: they notice the lost AM, cancel their tasks and reconnect to the
// new one (tm/worker retries for taskmanager.registration.timeout, 5 min).
type hdfsJob struct {
	t        testing.TB
	dir      string // work dir: log/
	ckptURI  string // state.checkpoints.dir
	ckpt     storage.Storage
	job      string
	args     []string
	dyn      []string
	id       string
	rpcPort  int
	restPort int

	mu     sync.Mutex
	am     *hdfsProc
	ams    int
	tms    map[string]*hdfsProc
	nextTM int
}

type hdfsProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// hdfsCheckpointRoot is a fresh directory on the mini-cluster for one test, deleted
// afterwards; it returns its URI and a storage rooted there.
func hdfsCheckpointRoot(t testing.TB, env *hadooptest.Env) (string, storage.Storage) {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	uri := fmt.Sprintf("%s/tide-e2e/%s-%d", env.URI, name, time.Now().UnixNano())
	st, err := storage.Open(context.Background(), uri, storage.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		parent, err := storage.Open(context.Background(), env.URI+"/tide-e2e", storage.Options{Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			if err := parent.Delete(context.Background(), uri[strings.LastIndex(uri, "/")+1:]); err != nil {
				t.Logf("deleting %s: %v", uri, err)
			}
			parent.Close()
		}
		st.Close()
	})
	return uri, st
}

// hdfsSettings are the e2e reactive settings with checkpoints on HDFS.
func hdfsSettings(ckptURI, interval string, extra ...string) []string {
	var out []string
	for _, kv := range reactive("", interval) {
		if !strings.HasPrefix(kv, "state.checkpoints.dir=") {
			out = append(out, kv)
		}
	}
	return append(append(out, "state.checkpoints.dir="+ckptURI), extra...)
}

func startHDFSJob(t testing.TB, env *hadooptest.Env, job string, args []string, tms int, interval string, extra ...string) *hdfsJob {
	t.Helper()
	uri, st := hdfsCheckpointRoot(t, env)
	return startJobAt(t, uri, st, job, args, tms, interval, extra...)
}

// startJobAt starts the job with state.checkpoints.dir = uri (st is rooted there).
func startJobAt(t testing.TB, uri string, st storage.Storage, job string, args []string, tms int, interval string, extra ...string) *hdfsJob {
	t.Helper()
	h := &hdfsJob{t: t, dir: t.TempDir(), ckptURI: uri, ckpt: st, job: job, args: args,
		dyn: hdfsSettings(uri, interval, extra...), id: fmt.Sprintf("%032x", time.Now().UnixNano()), tms: map[string]*hdfsProc{}}
	h.rpcPort, h.restPort = testkit.FreePort(t), testkit.FreePort(t)
	if err := os.MkdirAll(filepath.Join(h.dir, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	h.startAM()
	for range tms {
		h.addTM()
	}
	return h
}

func (h *hdfsJob) common() []string {
	var args []string
	for _, d := range h.dyn {
		args = append(args, "-D", d)
	}
	return append(args,
		"-D", "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port="+strconv.Itoa(h.rpcPort),
		"-D", "rest.bind-address=127.0.0.1", "-D", "rest.port="+strconv.Itoa(h.restPort))
}

func (h *hdfsJob) spawn(name string, args []string) *hdfsProc {
	h.t.Helper()
	f, err := os.OpenFile(filepath.Join(h.dir, "log", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(tideBin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		h.t.Fatalf("start %s: %v", name, err)
	}
	p := &hdfsProc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p
}

// startAM starts an AM attempt (jobmanager-<n>.log) for the job id on the job's ports.
func (h *hdfsJob) startAM() {
	h.t.Helper()
	h.mu.Lock()
	h.ams++
	n := h.ams
	h.mu.Unlock()
	args := append([]string{"jobmanager"}, h.common()...)
	args = append(args, "--job-id", h.id, "--job-classname", h.job, "--")
	p := h.spawn("jobmanager-"+strconv.Itoa(n), append(args, h.args...))
	h.mu.Lock()
	h.am = p
	h.mu.Unlock()
	// The REST port is free again once a killed AM is gone; wait until this one serves.
	testkit.WaitFor(h.t, "the AM's REST API", func() (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("AM exited: %v", p.err)
		default:
		}
		ids, err := testkit.JobIDs(h.rest)
		if err != nil {
			return false, err
		}
		return len(ids) == 1 && ids[0] == h.id, fmt.Errorf("jobs %v, want %s", ids, h.id)
	})
}

// killAM SIGKILLs the running AM and waits until it is gone.
func (h *hdfsJob) killAM() {
	h.t.Helper()
	h.mu.Lock()
	p := h.am
	h.mu.Unlock()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		h.t.Fatalf("SIGKILL %s: %v", p.name, err)
	}
	<-p.done
}

func (h *hdfsJob) addTM() string {
	h.t.Helper()
	h.mu.Lock()
	h.nextTM++
	n := h.nextTM
	h.mu.Unlock()
	id := "tm-" + strconv.Itoa(n)
	args := append([]string{"taskmanager"}, h.common()...)
	args = append(args, "-D", "taskmanager.node-id=local-"+strconv.Itoa(n), "--resource-id", id)
	p := h.spawn("taskmanager-"+strconv.Itoa(n), args)
	h.mu.Lock()
	h.tms[id] = p
	h.mu.Unlock()
	return id
}

func (h *hdfsJob) stop() {
	h.mu.Lock()
	all := []*hdfsProc{h.am}
	for _, p := range h.tms {
		all = append(all, p)
	}
	h.mu.Unlock()
	for _, p := range all {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(15 * time.Second)
	for _, p := range all {
		select {
		case <-p.done:
		case <-deadline:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if h.t.Failed() {
		testkit.TailLogs(h.t, filepath.Join(h.dir, "log"))
	}
}

// rest reads path of the job AM's REST API into v.
func (h *hdfsJob) rest(path string, v any) error {
	return testkit.GetJSON(context.Background(), "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(h.restPort))+path, v)
}

func (h *hdfsJob) checkpoints() (testkit.CheckpointStats, error) {
	var s testkit.CheckpointStats
	err := h.rest("/jobs/"+h.id+"/checkpoints", &s)
	return s, err
}

func (h *hdfsJob) details() (testkit.JobDetails, error) {
	var d testkit.JobDetails
	err := h.rest("/jobs/"+h.id, &d)
	return d, err
}

// waitRunning waits until the job is RUNNING with every vertex at parallelism p.
func (h *hdfsJob) waitRunning(p int) testkit.JobDetails {
	h.t.Helper()
	return testkit.WaitRunningAt(h.t, h.rest, h.id, p)
}

// waitRestored waits until the checkpoint statistics name the restored checkpoint.
func (h *hdfsJob) waitRestored() testkit.CheckpointStats {
	h.t.Helper()
	var s testkit.CheckpointStats
	testkit.WaitFor(h.t, "the restored checkpoint in the statistics", func() (bool, error) {
		var err error
		s, err = h.checkpoints()
		return err == nil && s.Latest.Restored != nil, err
	})
	return s
}

// waitCompletedIn waits for a completed checkpoint of attempt (its tasks have restored
// and run) and returns its id.
func (h *hdfsJob) waitCompletedIn(attempt int64) int64 {
	h.t.Helper()
	var id int64
	testkit.WaitFor(h.t, fmt.Sprintf("a checkpoint of attempt %d", attempt), func() (bool, error) {
		s, err := h.checkpoints()
		if err != nil {
			return false, err
		}
		if c := s.Latest.Completed; c != nil && c.Attempt >= attempt {
			id = c.ID
			return true, nil
		}
		return false, fmt.Errorf("latest completed %+v", s.Latest.Completed)
	})
	return id
}

// waitCompleted waits for a completed checkpoint with id > after and returns it.
func (h *hdfsJob) waitCompleted(after int64) int64 {
	h.t.Helper()
	var id int64
	testkit.WaitFor(h.t, fmt.Sprintf("a checkpoint after %d", after), func() (bool, error) {
		s, err := h.checkpoints()
		if err != nil {
			return false, err
		}
		if s.Latest.Completed == nil {
			return false, fmt.Errorf("no checkpoint completed")
		}
		id = s.Latest.Completed.ID
		return id > after, fmt.Errorf("latest completed %d", id)
	})
	return id
}

// finish waits for the AM to end the job and checks the output is exact.
func (h *hdfsJob) finish(out string) {
	h.t.Helper()
	h.mu.Lock()
	p := h.am
	h.mu.Unlock()
	select {
	case <-p.done:
	case <-time.After(3 * time.Minute):
		h.t.Fatal("the job did not finish")
	}
	if p.err != nil {
		h.t.Fatalf("AM exited with %v", p.err)
	}
	testkit.CheckExactOutput(h.t, out, h.args)
}

// amLog is the log of AM attempt n (1-based).
func (h *hdfsJob) amLog(n int) string {
	b, _ := os.ReadFile(filepath.Join(h.dir, "log", "jobmanager-"+strconv.Itoa(n)+".log"))
	return string(b)
}

// listCheckpoints lists <dir>/<job-id>/ on HDFS: complete (with _metadata) and
// incomplete checkpoint ids, ascending.
func (h *hdfsJob) listCheckpoints() (complete, incomplete []int64) {
	h.t.Helper()
	ctx := context.Background()
	entries, err := h.ckpt.List(ctx, h.id)
	if err != nil {
		h.t.Fatalf("list %s/%s: %v", h.ckptURI, h.id, err)
	}
	for _, e := range entries {
		n, ok := checkpoint.ParseChkName(e.Name)
		if !ok || !e.IsDir {
			continue
		}
		if _, err := h.ckpt.Stat(ctx, checkpoint.MetadataPath(h.id, n)); err == nil {
			complete = append(complete, n)
		} else {
			incomplete = append(incomplete, n)
		}
	}
	slices.Sort(complete)
	slices.Sort(incomplete)
	return complete, incomplete
}
