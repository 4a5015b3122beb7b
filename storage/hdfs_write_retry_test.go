package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// remoteError is a namenode exception as colinmarc/hdfs reports it (it satisfies hdfs.Error).
type remoteError struct{ exception, message string }

func (e remoteError) Error() string {
	return fmt.Sprintf("addBlock call failed with ERROR_APPLICATION (%s)", e.exception)
}
func (e remoteError) Method() string    { return "addBlock" }
func (e remoteError) Desc() string      { return "ERROR_APPLICATION" }
func (e remoteError) Exception() string { return e.exception }
func (e remoteError) Message() string   { return e.message }

var _ hdfs.Error = remoteError{}

var (
	errNotReplicatedYet = remoteError{"org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException", "Not replicated yet"}
	errAccessDenied     = remoteError{"org.apache.hadoop.security.AccessControlException", "Permission denied: user=x"}
	errPipelineReset    = fmt.Errorf("writing to datanode pipeline: %w", syscall.ECONNRESET)
)

// uploadFaults fails the upload attempts listed in failAt after that many bytes, and counts
// the bytes every attempt passed on.
type uploadFaults struct {
	err    error
	failAt map[int]int // attempt -> bytes passed before the error

	mu       sync.Mutex
	attempts map[int]int // attempt -> bytes passed on
}

func (f *uploadFaults) wrap(attempt int, w io.Writer) io.Writer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attempts == nil {
		f.attempts = map[int]int{}
	}
	f.attempts[attempt] = 0
	return writerFunc(func(p []byte) (int, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		limit, failing := f.failAt[attempt]
		if failing && f.attempts[attempt]+len(p) > limit {
			n, err := w.Write(p[:limit-f.attempts[attempt]])
			f.attempts[attempt] += n
			if err != nil {
				return n, err
			}
			return n, f.err
		}
		n, err := w.Write(p)
		f.attempts[attempt] += n
		return n, err
	})
}

func (f *uploadFaults) counts() map[int]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int]int{}
	for k, v := range f.attempts {
		out[k] = v
	}
	return out
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestHDFSWriteRetriesWholeUpload injects failures into upload attempts of files of up to
// storage.SessionBlocks blocks (the test cluster's blocks are 1 MiB), kept in memory or spilled
// to local disk: a transient failure repeats the whole upload, which then lands every byte
// exactly once; a permanent failure returns at once; either way no temporary file is left,
// locally or in HDFS.
func TestHDFSWriteRetriesWholeUpload(t *testing.T) {
	env := hadooptest.Require(t)
	quick := storage.RetryPolicy{Attempts: 3, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	for _, tc := range []struct {
		name       string
		bufferSize int
		size       int
		faults     *uploadFaults
		wantErr    error // nil: the write succeeds
		wantCounts map[int]int
	}{
		{"spilled, NotReplicatedYet on the first attempt", 1 << 20, 2<<20 - 123,
			&uploadFaults{err: errNotReplicatedYet, failAt: map[int]int{1: 3 << 19}}, nil,
			map[int]int{1: 3 << 19, 2: 2<<20 - 123}},
		{"always spill, pipeline reset on two attempts", -1, 2 << 20,
			&uploadFaults{err: errPipelineReset, failAt: map[int]int{1: 1 << 20, 2: 3<<19 + 7}}, nil,
			map[int]int{1: 1 << 20, 2: 3<<19 + 7, 3: 2 << 20}},
		{"in memory, NotReplicatedYet on the first attempt", 8 << 20, 1<<20 + 1,
			&uploadFaults{err: errNotReplicatedYet, failAt: map[int]int{1: 1<<19 + 10}}, nil,
			map[int]int{1: 1<<19 + 10, 2: 1<<20 + 1}},
		{"spilled, permission denied fails at once", 1 << 20, 2 << 20,
			&uploadFaults{err: errAccessDenied, failAt: map[int]int{1: 1 << 20}}, storage.ErrPermission,
			map[int]int{1: 1 << 20}},
		{"spilled, NotReplicatedYet on every attempt gives up", 1 << 20, 2 << 20,
			&uploadFaults{err: errNotReplicatedYet, failAt: map[int]int{1: 0, 2: 1 << 20, 3: 2<<20 - 1}}, storage.ErrUnavailable,
			map[int]int{1: 0, 2: 1 << 20, 3: 2<<20 - 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			spill := t.TempDir()
			logger, _ := newRetryWatcher(t)
			s := newHDFS(t, env, storage.Options{Logger: logger, Retry: quick, BufferSize: tc.bufferSize, SpillDir: spill})
			defer s.Close()
			storage.SetUploadFault(s, tc.faults.wrap)
			data := testBytes(tc.size)
			err := writeInPieces(ctx, s, "d/f", data)

			if got := tc.faults.counts(); fmt.Sprint(got) != fmt.Sprint(tc.wantCounts) {
				t.Errorf("bytes uploaded per attempt = %v, want %v", got, tc.wantCounts)
			}
			checkUploadOutcome(ctx, t, s, data, err, tc.wantErr, len(tc.wantCounts))
			if entries, err := os.ReadDir(spill); err != nil || len(entries) != 0 {
				t.Fatalf("spill dir holds %d entries, %v; want none", len(entries), err)
			}
		})
	}
}

// testBytes is n bytes of a pattern whose period (36) divides no block size, so that a block
// sent twice or skipped shows.
func testBytes(n int) []byte {
	return bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz"), n/36+1)[:n]
}

// writeInPieces writes data to name in 100 KiB writes and commits it.
func writeInPieces(ctx context.Context, s storage.Storage, name string, data []byte) error {
	w, err := s.Create(ctx, name)
	if err != nil {
		return fmt.Errorf("Create: %w", err)
	}
	for off := 0; off < len(data); off += 100 << 10 {
		if _, err := w.Write(data[off:min(off+100<<10, len(data))]); err != nil {
			return fmt.Errorf("Write at %d: %w", off, err)
		}
	}
	return w.Commit(ctx)
}

// checkUploadOutcome checks a commit of data to "d/f": with wantErr nil, that the file reads
// back exactly; otherwise that the error is wantErr after attempts attempts, names the file,
// and that nothing is visible under the final name. Either way no temporary file is left.
func checkUploadOutcome(ctx context.Context, t *testing.T, s storage.Storage, data []byte, err, wantErr error, attempts int) {
	t.Helper()
	if wantErr == nil {
		if err != nil {
			t.Fatalf("Commit: %v", err)
		}
		got, err := storage.ReadFile(ctx, s, "d/f")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("ReadFile = %d bytes, %v; want the %d bytes written, once", len(got), err, len(data))
		}
	} else {
		var se *storage.Error
		if !errors.Is(err, wantErr) || !errors.As(err, &se) || se.Attempts != attempts ||
			!strings.Contains(err.Error(), s.URI()+"/d/f") {
			t.Fatalf("Commit = %v, want %v after %d attempts naming %s/d/f", err, wantErr, attempts, s.URI())
		}
		if _, err := s.Stat(ctx, "d/f"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Stat after a failed commit = %v, want ErrNotFound", err)
		}
	}
	raw, rerr := storage.RawNames(ctx, s, "d")
	if rerr != nil {
		t.Fatalf("RawNames: %v", rerr)
	}
	wantRaw := "[]"
	if wantErr == nil {
		wantRaw = "[f]"
	}
	if fmt.Sprint(raw) != wantRaw {
		t.Fatalf("HDFS directory holds %v, want %s (no temporary file)", raw, wantRaw)
	}
}

// TestHDFSWriteAcrossDatanodeRestart restarts the datanode in the middle of the first upload
// session of a spilled multi-block file: the broken pipeline is a transient error; once the
// datanode is back, the file's lease is recovered and the upload goes on from what the datanode
// had, so at most the broken block is sent twice.
func TestHDFSWriteAcrossDatanodeRestart(t *testing.T) {
	env := hadooptest.Require(t)
	env.Disrupt(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logger, _ := newRetryWatcher(t)
	spill := t.TempDir()
	s := newHDFS(t, env, storage.Options{Logger: logger, BufferSize: 1 << 20, SpillDir: spill,
		Retry: storage.RetryPolicy{Attempts: 20, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}})
	defer s.Close()
	var (
		mu        sync.Mutex
		attempts  = map[int]int{}
		restarted error
	)
	storage.SetUploadFault(s, func(attempt int, w io.Writer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			// Half way into the second block (the test cluster's blocks are 1 MiB).
			if attempt == 1 && attempts[1] < 3<<19 && attempts[1]+len(p) >= 3<<19 {
				restarted = env.RestartDatanode(ctx)
			}
			n, err := w.Write(p)
			attempts[attempt] += n
			return n, err
		})
	})
	data := bytes.Repeat([]byte("abcdefghijklmnopq"), 4<<20/17)
	if err := storage.WriteFile(ctx, s, "f", data); err != nil {
		t.Fatalf("WriteFile across a datanode restart: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if restarted != nil {
		t.Fatalf("RestartDatanode: %v", restarted)
	}
	sent := 0
	for _, n := range attempts {
		sent += n
	}
	if len(attempts) < 2 || sent > len(data)+1<<20 {
		t.Fatalf("bytes uploaded per session = %v (%d in all): want a failed session and at most one block (1 MiB) sent twice for the %d bytes", attempts, sent, len(data))
	}
	got, err := storage.ReadFile(ctx, s, "f")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadFile = %d bytes, %v; want the %d bytes written, once", len(got), err, len(data))
	}
	if raw, err := storage.RawNames(ctx, s, ""); err != nil || fmt.Sprint(raw) != "[f]" {
		t.Fatalf("HDFS root holds %v, %v; want only f (no temporary file)", raw, err)
	}
	if entries, err := os.ReadDir(spill); err != nil || len(entries) != 0 {
		t.Fatalf("spill dir holds %d entries, %v; want none", len(entries), err)
	}
}
