package storage_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/storage/storagetest"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// hdfsTestRoot is the HDFS directory every test root lives under.
const hdfsTestRoot = "/tide-test"

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// testRootPath is a fresh HDFS path for t.
func testRootPath(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_", "#", "_").Replace(t.Name())
	return hdfsTestRoot + "/" + name + "-" + randomSuffix()
}

// newHDFS opens a storage on a fresh root and deletes the root when t ends.
func newHDFS(t testing.TB, env *hadooptest.Env, opts storage.Options) storage.Storage {
	t.Helper()
	root := testRootPath(t)
	s, err := storage.Open(context.Background(), env.URI+root, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", env.URI+root, err)
	}
	t.Cleanup(func() {
		c, err := storage.Open(context.Background(), env.URI+hdfsTestRoot, storage.Options{})
		if err != nil {
			t.Errorf("cleanup: Open: %v", err)
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Delete(ctx, strings.TrimPrefix(root, hdfsTestRoot+"/")); err != nil {
			t.Errorf("cleanup: Delete(%s): %v", root, err)
		}
	})
	return s
}

func TestHDFSConformance(t *testing.T) {
	env := hadooptest.Require(t)
	storagetest.Run(t, func(t *testing.T) storage.Storage { return newHDFS(t, env, storage.Options{}) })
}

// TestHDFSConformanceSpilling runs the suite with writers that keep nothing in memory: every
// byte goes through a local spill file.
func TestHDFSConformanceSpilling(t *testing.T) {
	env := hadooptest.Require(t)
	storagetest.Run(t, func(t *testing.T) storage.Storage {
		return newHDFS(t, env, storage.Options{BufferSize: -1})
	})
}

func TestHDFSNamenodeFromHadoopConfDir(t *testing.T) {
	env := hadooptest.Require(t)
	t.Setenv("HADOOP_CONF_DIR", env.ConfDir)
	root := testRootPath(t)
	s, err := storage.Open(context.Background(), "hdfs://"+root, storage.Options{})
	if err != nil {
		t.Fatalf("Open(hdfs://%s) with HADOOP_CONF_DIR: %v", root, err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := storage.WriteFile(ctx, s, "f", []byte("via core-site.xml")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	defer s.Delete(ctx, "f")
	// The same file through the explicit namenode address.
	direct, err := storage.Open(ctx, env.URI+root, storage.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer direct.Close()
	got, err := storage.ReadFile(ctx, direct, "f")
	if err != nil || string(got) != "via core-site.xml" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
}

func TestHDFSPermissionDenied(t *testing.T) {
	env := hadooptest.Require(t)
	ctx := context.Background()
	locked := testRootPath(t)
	// Owned by the superuser, not writable by others.
	if err := env.Mkdir(ctx, locked, 0o755, ""); err != nil {
		t.Fatalf("Mkdir: %v", err)
	}
	t.Cleanup(func() { _ = env.Command(context.Background(), "mkdir", locked, "777") })
	// The user comes from HADOOP_USER_NAME when no override is given.
	t.Setenv("HADOOP_USER_NAME", "tide-nobody")
	s, err := storage.Open(ctx, env.URI+locked, storage.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	err = storage.WriteFile(ctx, s, "f", []byte("x"))
	if !errors.Is(err, storage.ErrPermission) {
		t.Fatalf("WriteFile into a directory of another user = %v, want ErrPermission", err)
	}
	var se *storage.Error
	if !errors.As(err, &se) || se.Attempts != 1 || !strings.Contains(err.Error(), locked) {
		t.Fatalf("error %q: want a *storage.Error naming %s after one attempt", err, locked)
	}
}

func TestHDFSQuotaExceeded(t *testing.T) {
	env := hadooptest.Require(t)
	ctx := context.Background()
	s := newHDFS(t, env, storage.Options{})
	defer s.Close()
	root := strings.TrimPrefix(s.URI(), env.URI)
	if err := storage.WriteFile(ctx, s, "quota/small", []byte("fits")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	dir := root + "/quota"
	if err := env.SetSpaceQuota(ctx, dir, 4096); err != nil {
		t.Fatalf("SetSpaceQuota: %v", err)
	}
	t.Cleanup(func() { _ = env.ClearQuota(context.Background(), dir) })

	for _, tc := range []struct {
		name string
		opts storage.Options
	}{{"buffered", storage.Options{}}, {"spilled", storage.Options{BufferSize: -1}}} {
		t.Run(tc.name, func(t *testing.T) {
			qs, err := storage.Open(ctx, s.URI(), tc.opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer qs.Close()
			err = storage.WriteFile(ctx, qs, "quota/big", make([]byte, 64<<10))
			if !errors.Is(err, storage.ErrQuotaExceeded) {
				t.Fatalf("WriteFile over quota = %v, want ErrQuotaExceeded", err)
			}
			var se *storage.Error
			if !errors.As(err, &se) || se.Dir != dir || !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %q (Dir %q): want it to name directory %s", err, se.Dir, dir)
			}
			if _, err := qs.Stat(ctx, "quota/big"); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("Stat after a failed write = %v, want ErrNotFound", err)
			}
		})
	}
	if err := env.ClearQuota(ctx, dir); err != nil {
		t.Fatalf("ClearQuota: %v", err)
	}
	if err := storage.WriteFile(ctx, s, "quota/big", make([]byte, 64<<10)); err != nil {
		t.Fatalf("WriteFile after clearing the quota: %v", err)
	}
	mustList(t, s, "quota", "big", "small")
}

func mustList(t *testing.T, s storage.Storage, dir string, want ...string) {
	t.Helper()
	infos, err := s.List(context.Background(), dir)
	if err != nil {
		t.Fatalf("List(%s): %v", dir, err)
	}
	var got []string
	for _, fi := range infos {
		got = append(got, fi.Name)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("List(%s) = %v, want %v", dir, got, want)
	}
}

// retryWatcher is a slog handler that signals the first retry warning.
type retryWatcher struct {
	slog.Handler
	once    *sync.Once
	retried chan struct{}
}

func newRetryWatcher(t *testing.T) (*slog.Logger, <-chan struct{}) {
	w := &retryWatcher{Handler: slog.NewTextHandler(testWriter{t}, nil), once: new(sync.Once), retried: make(chan struct{})}
	return slog.New(w), w.retried
}

func (w *retryWatcher) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "retrying") {
		w.once.Do(func() { close(w.retried) })
	}
	return w.Handler.Handle(ctx, r)
}

func (w *retryWatcher) WithAttrs(as []slog.Attr) slog.Handler {
	return &retryWatcher{Handler: w.Handler.WithAttrs(as), once: w.once, retried: w.retried}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestHDFSSafeMode(t *testing.T) {
	env := hadooptest.Require(t)
	env.Disrupt(t)
	ctx := context.Background()
	logger, _ := newRetryWatcher(t)
	short := storage.RetryPolicy{Attempts: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
	s := newHDFS(t, env, storage.Options{Logger: logger, Retry: short})
	defer s.Close()
	if err := env.SafeMode(ctx, true); err != nil {
		t.Fatalf("SafeMode enter: %v", err)
	}
	t.Cleanup(func() { _ = env.SafeMode(context.Background(), false) })

	err := storage.WriteFile(ctx, s, "f", []byte("x"))
	var se *storage.Error
	if !errors.Is(err, storage.ErrUnavailable) || !errors.As(err, &se) || se.Attempts != 3 ||
		!strings.Contains(err.Error(), "SafeMode") {
		t.Fatalf("WriteFile in safe mode = %v, want ErrUnavailable after 3 attempts mentioning SafeMode", err)
	}

	// With enough retries, leaving safe mode while the write is retrying lets it succeed.
	long := storage.RetryPolicy{Attempts: 100, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	longLogger, retried := newRetryWatcher(t)
	ls, err := storage.Open(ctx, s.URI(), storage.Options{Logger: longLogger, Retry: long})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer ls.Close()
	done := make(chan error, 1)
	go func() { done <- storage.WriteFile(ctx, ls, "g", []byte("after safe mode")) }()
	<-retried
	if err := env.SafeMode(ctx, false); err != nil {
		t.Fatalf("SafeMode leave: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WriteFile across leaving safe mode: %v", err)
	}
	got, err := storage.ReadFile(ctx, ls, "g")
	if err != nil || string(got) != "after safe mode" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
}

func TestHDFSNamenodeRestart(t *testing.T) {
	env := hadooptest.Require(t)
	env.Disrupt(t)
	ctx := context.Background()
	logger, _ := newRetryWatcher(t)
	short := storage.RetryPolicy{Attempts: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
	s := newHDFS(t, env, storage.Options{Logger: logger, Retry: short})
	defer s.Close()
	if err := storage.WriteFile(ctx, s, "before", []byte("written before the restart")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	// A spilling writer open across the stop.
	w, err := storage.Open(ctx, s.URI(), storage.Options{Logger: logger, Retry: short, BufferSize: -1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer w.Close()
	sw, err := w.Create(ctx, "spilled")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := sw.Write([]byte("first part")); err != nil {
		t.Fatalf("Write: %v", err)
	}

	if err := env.StopNamenode(ctx); err != nil {
		t.Fatalf("StopNamenode: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.RestartNamenode(context.Background())
		}
	})

	err = storage.WriteFile(ctx, s, "during", []byte("x"))
	var se *storage.Error
	if !errors.Is(err, storage.ErrUnavailable) || !errors.As(err, &se) || se.Attempts != 3 ||
		!strings.Contains(err.Error(), s.URI()+"/during") {
		t.Fatalf("WriteFile with the namenode down = %v, want ErrUnavailable after 3 attempts naming %s/during", err, s.URI())
	}
	if err := sw.Commit(ctx); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Commit of a spilled file with the namenode down = %v, want ErrUnavailable", err)
	}

	// A write of a spilled multi-block file with a longer retry budget rides over the restart.
	long := storage.RetryPolicy{Attempts: 200, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 250 * time.Millisecond}
	longLogger, retried := newRetryWatcher(t)
	ls, err := storage.Open(ctx, s.URI(), storage.Options{Logger: longLogger, Retry: long, BufferSize: 1 << 20})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer ls.Close()
	done := make(chan error, 1)
	across := strings.Repeat("written across the restart\n", 3<<20/27)
	go func() { done <- storage.WriteFile(ctx, ls, "across", []byte(across)) }()
	<-retried
	if err := env.RestartNamenode(ctx); err != nil {
		t.Fatalf("RestartNamenode: %v", err)
	}
	restarted = true
	if err := <-done; err != nil {
		t.Fatalf("WriteFile across the restart: %v", err)
	}

	// The first storage works again (its client reconnects), and nothing was lost.
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	recovered := storage.Options{Logger: logger, Retry: long}
	rs, err := storage.Open(rctx, s.URI(), recovered)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rs.Close()
	for name, want := range map[string]string{"before": "written before the restart", "across": across} {
		got, err := storage.ReadFile(rctx, rs, name)
		if err != nil || string(got) != want {
			t.Fatalf("ReadFile(%s) after restart = %d bytes, %v; want the %d bytes written", name, len(got), err, len(want))
		}
	}
	if err := storage.WriteFile(rctx, s, "after", []byte("y")); err != nil {
		t.Fatalf("WriteFile through the first storage after the restart: %v", err)
	}
	mustList(t, rs, "", "across", "after", "before")
}

func TestHDFSNoSuchNamenode(t *testing.T) {
	_, err := storage.Open(context.Background(), "hdfs://no-such-namenode.invalid:8020/x", storage.Options{})
	if !errors.Is(err, storage.ErrNoSuchNamenode) || !strings.Contains(err.Error(), "no-such-namenode.invalid") {
		t.Fatalf("Open with an unknown namenode host = %v, want ErrNoSuchNamenode naming the host", err)
	}
}

func TestHDFSReadAcrossDatanodeRestart(t *testing.T) {
	env := hadooptest.Require(t)
	env.Disrupt(t)
	ctx := context.Background()
	logger, _ := newRetryWatcher(t)
	s := newHDFS(t, env, storage.Options{Logger: logger,
		Retry: storage.RetryPolicy{Attempts: 20, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}})
	defer s.Close()
	data := make([]byte, 4<<20+100) // several blocks of the test cluster (1 MiB blocks)
	for i := range data {
		data[i] = byte(i * 31)
	}
	if err := storage.WriteFile(ctx, s, "f", data); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	r, err := s.Open(ctx, "f")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	got := make([]byte, 0, len(data))
	buf := make([]byte, 64<<10)
	for len(got) < 1<<20+300<<10 { // stop inside the second block
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("Read before the restart at %d: %v", len(got), err)
		}
	}
	if err := env.RestartDatanode(ctx); err != nil {
		t.Fatalf("RestartDatanode: %v", err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("Read after the datanode restart at %d: %v", len(got), err)
	}
	got = append(got, rest...)
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes across the datanode restart, want the %d bytes written", len(got), len(data))
	}
}

// TestHDFSClosedStorageFailsAtOnce: a call on a closed storage is a permanent error, not a
// transient one retried with backoff.
func TestHDFSClosedStorageFailsAtOnce(t *testing.T) {
	env := hadooptest.Require(t)
	s := newHDFS(t, env, storage.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err := s.Delete(context.Background(), "x")
	var se *storage.Error
	if !errors.Is(err, storage.ErrClosed) || !errors.As(err, &se) || se.Attempts > 1 {
		t.Fatalf("Delete on a closed storage: %v, want ErrClosed after one attempt", err)
	}
}
