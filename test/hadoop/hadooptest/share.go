package hadooptest

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// One mini-cluster serves every test package, and `go test ./...` runs packages in
// parallel processes. A test that stops the namenode, restarts the datanode or enters safe
// mode would fail the HDFS calls of whatever test of another package runs meanwhile (CI: a
// file sink test of stream/ saw the namenode refuse connections, then answer in safe mode,
// while storage/ restarted it). So every test holds the cluster shared (Require), and a
// test that disrupts it holds it alone (Disrupt): a file lock beside the env file, shared or
// exclusive, held by the process while any of its tests uses the cluster.
//
// Tests of one process that use the cluster must not run in parallel with each other
// (t.Parallel): within a process, the lock is the process's, and Disrupt takes it for
// the whole process.

// clusterLock is the process's hold on the lock file.
var clusterLock struct {
	mu        sync.Mutex
	f         *os.File
	users     int // tests holding it (Require and Disrupt each count once)
	exclusive int // of which Disrupt
}

// share holds the cluster shared until t ends; it waits while a test of another process
// disrupts it.
func (e *Env) share(t testing.TB) {
	t.Helper()
	if err := hold(e.Path, false); err != nil {
		t.Fatalf("mini-cluster lock: %v", err)
	}
	t.Cleanup(func() { release(false) })
}

// Disrupt is for a test that stops, restarts or freezes part of the cluster (after
// Require): it waits until no test of another process uses the cluster and keeps them
// out until t ends.
func (e *Env) Disrupt(t testing.TB) {
	t.Helper()
	start := time.Now()
	if err := hold(e.Path, true); err != nil {
		t.Fatalf("mini-cluster lock: %v", err)
	}
	t.Cleanup(func() { release(true) })
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %s for the tests of other packages to stop using the mini-cluster", waited.Round(time.Millisecond))
	}
}

// hold takes the lock file beside envPath, shared or exclusive, for one more test.
func hold(envPath string, exclusive bool) error {
	c := &clusterLock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		f, err := os.OpenFile(envPath+".lock", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		c.f = f
	}
	switch {
	case exclusive && c.exclusive == 0:
		// Converting a shared lock is not atomic (it is dropped, then the exclusive one is
		// waited for), so two processes converting at once cannot deadlock.
		if err := flock(c.f, syscall.LOCK_EX); err != nil {
			return err
		}
	case !exclusive && c.users == 0:
		if err := flock(c.f, syscall.LOCK_SH); err != nil {
			return err
		}
	}
	c.users++
	if exclusive {
		c.exclusive++
	}
	return nil
}

// release gives back one test's hold.
func release(exclusive bool) {
	c := &clusterLock
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users--
	if exclusive {
		c.exclusive--
	}
	switch {
	case c.users == 0:
		_ = c.f.Close() // drops the lock
		c.f = nil
	case exclusive && c.exclusive == 0:
		_ = flock(c.f, syscall.LOCK_SH)
	}
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			if err != nil {
				return fmt.Errorf("flock %s: %w", f.Name(), err)
			}
			return nil
		}
	}
}
