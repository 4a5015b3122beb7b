package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidestream/tide/conf"
)

// LocalOptions configure a local standalone cluster: one AM and TaskManagers, all child
// processes of the same tide binary on this machine.
type LocalOptions struct {
	// Binary is the tide executable; empty uses the running one.
	Binary string
	// WorkDir receives log/ (one file per process).
	WorkDir string
	// ConfigDir is passed as --configDir; Dynamic as -D to every process.
	ConfigDir string
	Dynamic   []string
	JobName   string
	JobArgs   []string
	// FromSavepoint is passed to the AM as --fromSavepoint (the job starts from that
	// savepoint), AllowNonRestoredState as --allowNonRestoredState.
	FromSavepoint         string
	AllowNonRestoredState bool
	// TaskManagers is how many start with the AM.
	TaskManagers int
	// RPCPort and RESTPort are the AM's ports; 0 picks free ones.
	RPCPort, RESTPort int
	// Env is added to every child's environment.
	Env []string
}

// LocalCluster is a running local cluster.
type LocalCluster struct {
	opts     LocalOptions
	rpcPort  int
	restPort int
	am       *child
	lock     *os.File // the work directory's lock (lockWorkDir), until Stop

	mu     sync.Mutex
	tms    map[string]*child
	nextTM int
}

type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// The flags of tide jobmanager through which StartLocal hands the AM the sockets it bound
// for it: the child's file descriptors 3 (RPC) and 4 (REST).
const (
	RPCListenerFDFlag  = "rpc-listener-fd"
	RESTListenerFDFlag = "rest-listener-fd"
)

// StartLocal starts the AM and opts.TaskManagers TaskManagers. It binds the AM's two ports
// itself (ports left 0 in opts on ports the kernel picks) and hands the listening sockets
// to the AM process, so no other process can take a port between its choice and its use,
// a port that is taken fails here, before anything started, and the TaskManagers start
// together with the AM.
func StartLocal(ctx context.Context, opts LocalOptions) (*LocalCluster, error) {
	if opts.Binary == "" {
		bin, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("local cluster: locate the tide binary: %w", err)
		}
		opts.Binary = bin
	}
	if opts.JobName == "" {
		return nil, errors.New("local cluster: no job name")
	}
	if err := os.MkdirAll(filepath.Join(opts.WorkDir, "log"), 0o755); err != nil {
		return nil, fmt.Errorf("local cluster: create %s/log: %w", opts.WorkDir, err)
	}
	lock, err := lockWorkDir(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			lock.Close()
		}
	}()
	rpcLn, err := listenLocal(conf.JobManagerRPCPort.Key(), opts.RPCPort)
	if err != nil {
		return nil, err
	}
	defer rpcLn.Close()
	restLn, err := listenLocal(conf.RestPort.Key(), opts.RESTPort)
	if err != nil {
		return nil, err
	}
	defer restLn.Close()
	// This run starts: the logs of an earlier one in the work directory move aside.
	if err := rotateLogs(filepath.Join(opts.WorkDir, "log"), keptLogRuns); err != nil {
		return nil, err
	}
	c := &LocalCluster{opts: opts, rpcPort: rpcLn.Addr().(*net.TCPAddr).Port, restPort: restLn.Addr().(*net.TCPAddr).Port,
		tms: map[string]*child{}, lock: lock}
	// The first AM waits for the TaskManagers started with it (ids tm-1..tm-N, see
	// AddTaskManager) and deploys once, when the last one registered; it serves on the
	// sockets bound above.
	var first []string
	for i := 1; i <= opts.TaskManagers; i++ {
		first = append(first, "--expect-taskmanagers", "tm-"+strconv.Itoa(i))
	}
	first = append(first, "--"+RPCListenerFDFlag, "3", "--"+RESTListenerFDFlag, "4")
	args := c.amArgs(first...)
	files, err := listenerFiles(rpcLn, restLn)
	if err != nil {
		return nil, err
	}
	c.am, err = c.start("jobmanager", args, files...)
	for _, f := range files {
		f.Close() // the AM holds its own copies; the port is free again once it exits
	}
	if err != nil {
		return nil, err
	}
	started = true // from here, Stop releases the work directory
	for i := 0; i < opts.TaskManagers; i++ {
		if _, err := c.AddTaskManager(ctx); err != nil {
			_ = c.Stop(context.Background())
			return nil, err
		}
	}
	return c, nil
}

// listenLocal binds 127.0.0.1:port for the AM, naming the setting when that fails.
func listenLocal(key string, port int) (*net.TCPListener, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("local cluster: %s %s for the AM: %w", key, addr, err)
	}
	return ln.(*net.TCPListener), nil
}

// listenerFiles are copies of the listeners' sockets for a child to inherit.
func listenerFiles(lns ...*net.TCPListener) ([]*os.File, error) {
	var files []*os.File
	for _, ln := range lns {
		f, err := ln.File()
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("local cluster: hand %s to the AM: %w", ln.Addr(), err)
		}
		files = append(files, f)
	}
	return files, nil
}

// amArgs are an AM's arguments: common(), the job and how it starts, extra, then the job's
// own arguments.
func (c *LocalCluster) amArgs(extra ...string) []string {
	args := append([]string{"jobmanager"}, c.common()...)
	args = append(args, "--job-classname", c.opts.JobName)
	if c.opts.FromSavepoint != "" {
		args = append(args, "--fromSavepoint", c.opts.FromSavepoint)
	}
	if c.opts.AllowNonRestoredState {
		args = append(args, "--allowNonRestoredState")
	}
	args = append(append(args, extra...), "--")
	return append(args, c.opts.JobArgs...)
}

// NextAMArgs are the arguments of another AM attempt of this cluster's job, as YARN starts
// a next attempt with the first one's command: the same settings, job and ports, which the
// attempt binds itself once the first AM is gone; it recovers from the latest checkpoint
// and adopts or redeploys the TaskManagers' subtasks.
func (c *LocalCluster) NextAMArgs() []string { return c.amArgs() }

// common are the arguments every child gets: opts.Dynamic, except the keys the local
// cluster sets itself (the AM's addresses: its ports come from LocalOptions), then those.
func (c *LocalCluster) common() []string {
	var args []string
	if c.opts.ConfigDir != "" {
		args = append(args, "--configDir", c.opts.ConfigDir)
	}
	own := [][2]string{
		{conf.JobManagerRPCAddress.Key(), "127.0.0.1"},
		{conf.JobManagerRPCPort.Key(), strconv.Itoa(c.rpcPort)},
		{conf.RestBindAddress.Key(), "127.0.0.1"},
		{conf.RestPort.Key(), strconv.Itoa(c.restPort)},
	}
	for _, d := range c.opts.Dynamic {
		k, _, _ := strings.Cut(d, "=")
		if !slices.ContainsFunc(own, func(kv [2]string) bool { return kv[0] == strings.TrimSpace(k) }) {
			args = append(args, "-D", d)
		}
	}
	for _, kv := range own {
		args = append(args, "-D", kv[0]+"="+kv[1])
	}
	return args
}

// start starts a child process; extra become its file descriptors 3, 4, ...
func (c *LocalCluster) start(name string, args []string, extra ...*os.File) (*child, error) {
	logPath := filepath.Join(c.opts.WorkDir, "log", name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("local cluster: open log of %s: %w", name, err)
	}
	cmd := exec.Command(c.opts.Binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), c.opts.Env...)
	cmd.ExtraFiles = extra
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("local cluster: start %s (%s): %w", name, c.opts.Binary, err)
	}
	ch := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		ch.err = cmd.Wait()
		f.Close()
		close(ch.done)
	}()
	return ch, nil
}

// AddTaskManager starts one more TaskManager (ctx is checked before starting it) and returns its id ("tm-<n>"); its node
// id is "local-<n>" so the blocklist can tell TaskManagers apart on one machine.
func (c *LocalCluster) AddTaskManager(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("local cluster: add TaskManager: %w", err)
	}
	c.mu.Lock()
	c.nextTM++
	n := c.nextTM
	c.mu.Unlock()
	id := "tm-" + strconv.Itoa(n)
	args := append([]string{"taskmanager"}, c.common()...)
	args = append(args, "-D", "taskmanager.node-id=local-"+strconv.Itoa(n), "--resource-id", id)
	ch, err := c.start("taskmanager-"+strconv.Itoa(n), args)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.tms[id] = ch
	c.mu.Unlock()
	return id, nil
}

// Signal sends sig to TaskManager id (syscall.SIGKILL to simulate a crash).
func (c *LocalCluster) Signal(id string, sig syscall.Signal) error {
	c.mu.Lock()
	ch, ok := c.tms[id]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("local cluster: no TaskManager %s", id)
	}
	if err := ch.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("local cluster: signal %s to TaskManager %s: %w", sig, id, err)
	}
	return nil
}

// SignalAM sends sig to the AM (syscall.SIGKILL to simulate its crash).
func (c *LocalCluster) SignalAM(sig syscall.Signal) error {
	if err := c.am.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("local cluster: signal %s to the AM: %w", sig, err)
	}
	return nil
}

// TaskManagers lists the ids of TaskManagers still running.
func (c *LocalCluster) TaskManagers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id, ch := range c.tms {
		select {
		case <-ch.done:
		default:
			out = append(out, id)
		}
	}
	return out
}

// RESTAddress is the AM's REST endpoint, host:port.
func (c *LocalCluster) RESTAddress() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.restPort))
}

// RPCAddress is the AM's RPC endpoint, host:port.
func (c *LocalCluster) RPCAddress() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.rpcPort))
}

// LogDir is where each process writes its log.
func (c *LocalCluster) LogDir() string { return filepath.Join(c.opts.WorkDir, "log") }

// AMDone is closed when the AM process exits.
func (c *LocalCluster) AMDone() <-chan struct{} { return c.am.done }

// AMErr is the AM's exit error once AMDone is closed.
func (c *LocalCluster) AMErr() error { return c.am.err }

// Stop sends SIGTERM to every process, waits up to ctx's deadline (10 s without one),
// then kills what is left.
func (c *LocalCluster) Stop(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	c.mu.Lock()
	all := []*child{c.am}
	for _, ch := range c.tms {
		all = append(all, ch)
	}
	c.mu.Unlock()
	for _, ch := range all {
		_ = ch.cmd.Process.Signal(syscall.SIGTERM)
	}
	var errs []error
	for _, ch := range all {
		select {
		case <-ch.done:
		case <-ctx.Done():
			_ = ch.cmd.Process.Kill()
			<-ch.done
			errs = append(errs, fmt.Errorf("%s did not stop on SIGTERM; killed", ch.name))
		}
	}
	c.mu.Lock()
	if c.lock != nil { // every process ended: another cluster may use the work directory
		c.lock.Close()
		c.lock = nil
	}
	c.mu.Unlock()
	return errors.Join(errs...)
}

// Describe writes where things are, for the user.
func (c *LocalCluster) Describe(w io.Writer) {
	fmt.Fprintf(w, "tide local cluster: job %s\n", c.opts.JobName)
	fmt.Fprintf(w, "  REST API:  http://%s  (try /jobs/overview, /taskmanagers)\n", c.RESTAddress())
	fmt.Fprintf(w, "  AM RPC:    %s\n", c.RPCAddress())
	fmt.Fprintf(w, "  logs:      %s/ (jobmanager.log, taskmanager-<n>.log; print sinks write there; <name>.log.1 is the last run's)\n", c.LogDir())
}
