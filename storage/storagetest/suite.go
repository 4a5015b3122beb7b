// Package storagetest is the conformance suite every storage.Storage implementation passes.
//
//	func TestLocalConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Storage { return newEmptyRoot(t) })
//	}
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
)

// Run runs every conformance test; newStorage must return a storage on a new, empty root
// (it may register its own cleanup). The suite closes each storage when its subtest ends.
func Run(t *testing.T, newStorage func(t *testing.T) storage.Storage) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Storage)
	}{
		{"CreateCommitRead", testCreateCommitRead},
		{"EmptyFile", testEmptyFile},
		{"LargeFile", testLargeFile},
		{"NotVisibleBeforeCommit", testNotVisibleBeforeCommit},
		{"Abort", testAbort},
		{"WriterFinishedAfterCommit", testWriterFinished},
		{"CommitReplacesExisting", testCommitReplaces},
		{"List", testList},
		{"StatAndOpenMissing", testMissing},
		{"DeleteRecursive", testDeleteRecursive},
		{"RenameOntoExisting", testRenameOntoExisting},
		{"PartialWritesNeverVisible", testPartialWritesNeverVisible},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Latest", testLatest},
		{"LatestConcurrent", testLatestConcurrent},
		{"ContextCancellation", testContextCancellation},
		{"InvalidNames", testInvalidNames},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStorage(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close(%s): %v", s.URI(), err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// ctx is the context of one test, with a generous deadline so a hang fails instead of blocking.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return c
}

// payload is deterministic test data of n bytes, distinct per seed.
func payload(seed string, n int) []byte {
	out := make([]byte, n)
	h := uint32(2166136261)
	for _, c := range []byte(seed) {
		h = (h ^ uint32(c)) * 16777619
	}
	for i := range out {
		h ^= h << 13
		h ^= h >> 17
		h ^= h << 5
		out[i] = byte(h)
	}
	return out
}

func mustWrite(t *testing.T, s storage.Storage, name string, data []byte) {
	t.Helper()
	if err := storage.WriteFile(ctx(t), s, name, data); err != nil {
		t.Fatalf("WriteFile(%q, %d bytes): %v", name, len(data), err)
	}
}

func mustRead(t *testing.T, s storage.Storage, name string, want []byte) {
	t.Helper()
	got, err := storage.ReadFile(ctx(t), s, name)
	if err != nil {
		t.Fatalf("ReadFile(%q): %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ReadFile(%q) = %d bytes %.16q, want %d bytes %.16q", name, len(got), got, len(want), want)
	}
}

func mustNotExist(t *testing.T, s storage.Storage, name string) {
	t.Helper()
	if fi, err := s.Stat(ctx(t), name); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat(%q) = %+v, %v; want ErrNotFound", name, fi, err)
	}
}

func names(infos []storage.FileInfo) []string {
	out := make([]string, len(infos))
	for i, fi := range infos {
		out[i] = fi.Name
	}
	return out
}

func mustList(t *testing.T, s storage.Storage, dir string, want ...string) []storage.FileInfo {
	t.Helper()
	infos, err := s.List(ctx(t), dir)
	if err != nil {
		t.Fatalf("List(%q): %v", dir, err)
	}
	if got := strings.Join(names(infos), ","); got != strings.Join(want, ",") {
		t.Fatalf("List(%q) = [%s], want [%s]", dir, got, strings.Join(want, ","))
	}
	return infos
}

func testCreateCommitRead(t *testing.T, s storage.Storage) {
	data := payload("ccr", 10_000)
	w, err := s.Create(ctx(t), "job/chk-1/op-0")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	for i := 0; i < len(data); i += 3000 {
		if _, err := w.Write(data[i:min(i+3000, len(data))]); err != nil {
			t.Fatalf("Write at %d: %v", i, err)
		}
	}
	if err := w.Commit(ctx(t)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	mustRead(t, s, "job/chk-1/op-0", data)
	fi, err := s.Stat(ctx(t), "job/chk-1/op-0")
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if fi.Name != "op-0" || fi.Size != int64(len(data)) || fi.IsDir || fi.ModTime.IsZero() {
		t.Fatalf("Stat = %+v, want name op-0, size %d, a file with a modification time", fi, len(data))
	}
	dir, err := s.Stat(ctx(t), "job/chk-1")
	if err != nil || !dir.IsDir {
		t.Fatalf("Stat(job/chk-1) = %+v, %v; want a directory", dir, err)
	}
}

func testEmptyFile(t *testing.T, s storage.Storage) {
	mustWrite(t, s, "empty", nil)
	mustRead(t, s, "empty", []byte{})
	fi, err := s.Stat(ctx(t), "empty")
	if err != nil || fi.Size != 0 || fi.IsDir {
		t.Fatalf("Stat(empty) = %+v, %v; want an empty file", fi, err)
	}
}

func testLargeFile(t *testing.T, s storage.Storage) {
	// Larger than the HDFS writer's default buffer and several HDFS blocks of the test cluster.
	data := payload("large", 9<<20+12345)
	w, err := s.Create(ctx(t), "big/state")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := w.Write(data[off:min(off+1<<20, len(data))]); err != nil {
			t.Fatalf("Write at %d: %v", off, err)
		}
	}
	mustNotExist(t, s, "big/state")
	if err := w.Commit(ctx(t)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	mustRead(t, s, "big/state", data)
}

func testNotVisibleBeforeCommit(t *testing.T, s storage.Storage) {
	mustWrite(t, s, "dir/other", []byte("x"))
	w, err := s.Create(ctx(t), "dir/pending")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("not yet")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	mustNotExist(t, s, "dir/pending")
	if _, err := s.Open(ctx(t), "dir/pending"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Open(uncommitted) error = %v, want ErrNotFound", err)
	}
	mustList(t, s, "dir", "other")
	if err := w.Commit(ctx(t)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	mustList(t, s, "dir", "other", "pending")
	mustRead(t, s, "dir/pending", []byte("not yet"))
}

func testAbort(t *testing.T, s storage.Storage) {
	w, err := s.Create(ctx(t), "a/aborted")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write(payload("abort", 5000)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Abort(ctx(t)); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if err := w.Abort(ctx(t)); err != nil {
		t.Fatalf("second Abort: %v, want nil", err)
	}
	if err := w.Commit(ctx(t)); !errors.Is(err, storage.ErrWriterClosed) {
		t.Fatalf("Commit after Abort = %v, want ErrWriterClosed", err)
	}
	mustNotExist(t, s, "a/aborted")
	// No temporary file is left behind either (List hides them, so look for any entry).
	if infos, err := s.List(ctx(t), "a"); err == nil && len(infos) != 0 {
		t.Fatalf("List(a) after Abort = %v, want empty", names(infos))
	} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("List(a) after Abort: %v", err)
	}
}

func testWriterFinished(t *testing.T, s storage.Storage) {
	w, err := s.Create(ctx(t), "once")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("v1")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Commit(ctx(t)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, storage.ErrWriterClosed) {
		t.Fatalf("Write after Commit = %v, want ErrWriterClosed", err)
	}
	if err := w.Commit(ctx(t)); !errors.Is(err, storage.ErrWriterClosed) {
		t.Fatalf("second Commit = %v, want ErrWriterClosed", err)
	}
	if err := w.Abort(ctx(t)); err != nil {
		t.Fatalf("Abort after Commit = %v, want nil", err)
	}
	mustRead(t, s, "once", []byte("v1"))
}

func testCommitReplaces(t *testing.T, s storage.Storage) {
	mustWrite(t, s, "f", []byte("first version"))
	mustWrite(t, s, "f", []byte("v2"))
	mustRead(t, s, "f", []byte("v2"))
	mustList(t, s, "", "f")
}

func testList(t *testing.T, s storage.Storage) {
	for _, n := range []string{"d/b", "d/a", "d/c/x", "d/c/y/z", "top"} {
		mustWrite(t, s, n, []byte(n))
	}
	infos := mustList(t, s, "d", "a", "b", "c")
	if infos[0].IsDir || infos[0].Size != 3 || !infos[2].IsDir {
		t.Fatalf("List(d) = %+v; want files a and b of 3 bytes and directory c", infos)
	}
	mustList(t, s, "", "d", "top")
	mustList(t, s, ".", "d", "top")
	mustList(t, s, "d/c/", "x", "y")
	if _, err := s.List(ctx(t), "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("List(absent) error = %v, want ErrNotFound", err)
	}
	if _, err := s.List(ctx(t), "top"); err == nil {
		t.Fatal("List(a file) succeeded, want an error")
	}
}

func testMissing(t *testing.T, s storage.Storage) {
	mustNotExist(t, s, "absent/file")
	_, err := s.Open(ctx(t), "absent")
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Open(absent) = %v, want ErrNotFound", err)
	}
	var se *storage.Error
	if !errors.As(err, &se) || !strings.HasPrefix(se.Path, s.URI()) || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("Open(absent) error %q (%T) should be a *storage.Error naming %s/absent", err, err, s.URI())
	}
}

func testDeleteRecursive(t *testing.T, s storage.Storage) {
	for _, n := range []string{"job/chk-1/a", "job/chk-1/sub/b", "job/chk-2/a"} {
		mustWrite(t, s, n, []byte(n))
	}
	if err := s.Delete(ctx(t), "job/chk-1"); err != nil {
		t.Fatalf("Delete(dir): %v", err)
	}
	mustNotExist(t, s, "job/chk-1/sub/b")
	mustList(t, s, "job", "chk-2")
	if err := s.Delete(ctx(t), "job/chk-2/a"); err != nil {
		t.Fatalf("Delete(file): %v", err)
	}
	mustList(t, s, "job/chk-2")
	if err := s.Delete(ctx(t), "job/never"); err != nil {
		t.Fatalf("Delete(absent) = %v, want nil", err)
	}
	if err := s.Delete(ctx(t), ""); !errors.Is(err, storage.ErrInvalidName) {
		t.Fatalf("Delete(root) = %v, want ErrInvalidName", err)
	}
}

func testRenameOntoExisting(t *testing.T, s storage.Storage) {
	mustWrite(t, s, "from", []byte("new contents"))
	mustWrite(t, s, "to", []byte("old"))
	if err := s.Rename(ctx(t), "from", "to"); err != nil {
		t.Fatalf("Rename onto existing: %v", err)
	}
	mustRead(t, s, "to", []byte("new contents"))
	mustNotExist(t, s, "from")
	if err := s.Rename(ctx(t), "to", "deep/er/moved"); err != nil {
		t.Fatalf("Rename into new directories: %v", err)
	}
	mustRead(t, s, "deep/er/moved", []byte("new contents"))
	if err := s.Rename(ctx(t), "missing", "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Rename(missing) = %v, want ErrNotFound", err)
	}
}

func testPartialWritesNeverVisible(t *testing.T, s storage.Storage) {
	const chunk = 64 << 10
	data := payload("partial", 40*chunk)
	w, err := s.Create(ctx(t), "p/file")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	// A reader polls while the writer writes: it may see nothing, or the complete file.
	stop := make(chan struct{})
	var observations, bad atomic.Int64
	var badMsg atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			observations.Add(1)
			infos, err := s.List(ctx(t), "p")
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				bad.Add(1)
				badMsg.Store(fmt.Sprintf("List: %v", err))
				continue
			}
			for _, fi := range infos {
				if fi.Name != "file" || fi.Size != int64(len(data)) {
					bad.Add(1)
					badMsg.Store(fmt.Sprintf("List saw %+v before or without the complete file", fi))
				}
			}
			if fi, err := s.Stat(ctx(t), "p/file"); err == nil && fi.Size != int64(len(data)) {
				bad.Add(1)
				badMsg.Store(fmt.Sprintf("Stat saw a partial file: %+v", fi))
			}
		}
	}()
	for off := 0; off < len(data); off += chunk {
		if _, err := w.Write(data[off : off+chunk]); err != nil {
			t.Fatalf("Write at %d: %v", off, err)
		}
	}
	if err := w.Commit(ctx(t)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	close(stop)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d bad observations out of %d; last: %v", n, observations.Load(), badMsg.Load())
	}
	mustRead(t, s, "p/file", data)
}

func testConcurrentWriters(t *testing.T, s storage.Storage) {
	const writers = 8
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			name := fmt.Sprintf("chk-7/subtask-%d", i)
			data := payload(name, 50_000+i*1000)
			w, err := s.Create(ctx(t), name)
			if err != nil {
				errs <- fmt.Errorf("Create(%s): %w", name, err)
				return
			}
			for off := 0; off < len(data); off += 7000 {
				if _, err := w.Write(data[off:min(off+7000, len(data))]); err != nil {
					errs <- fmt.Errorf("Write(%s): %w", name, err)
					return
				}
			}
			if err := w.Commit(ctx(t)); err != nil {
				errs <- fmt.Errorf("Commit(%s): %w", name, err)
				return
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	var want []string
	for i := range writers {
		name := fmt.Sprintf("subtask-%d", i)
		want = append(want, name)
		mustRead(t, s, "chk-7/"+name, payload("chk-7/"+name, 50_000+i*1000))
	}
	mustList(t, s, "chk-7", want...)
}

func testLatest(t *testing.T, s storage.Storage) {
	if _, err := storage.Latest(ctx(t), s, "job"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Latest(never set) = %v, want ErrNotFound", err)
	}
	for _, v := range []string{"chk-1", "chk-2", "chk-10"} {
		if err := storage.SetLatest(ctx(t), s, "job", v); err != nil {
			t.Fatalf("SetLatest(%s): %v", v, err)
		}
		got, err := storage.Latest(ctx(t), s, "job")
		if err != nil || got != v {
			t.Fatalf("Latest = %q, %v; want %q", got, err, v)
		}
	}
	for _, bad := range []string{"", "two\nlines", strings.Repeat("x", 5000)} {
		if err := storage.SetLatest(ctx(t), s, "job", bad); !errors.Is(err, storage.ErrInvalidName) {
			t.Fatalf("SetLatest(%.20q) = %v, want ErrInvalidName", bad, err)
		}
	}
	if err := storage.SetLatest(ctx(t), s, "", "root-pointer"); err != nil {
		t.Fatalf("SetLatest at the root: %v", err)
	}
	if got, err := storage.Latest(ctx(t), s, "."); err != nil || got != "root-pointer" {
		t.Fatalf("Latest(.) = %q, %v; want root-pointer", got, err)
	}
	mustList(t, s, "job", storage.LatestFile)
}

func testLatestConcurrent(t *testing.T, s storage.Storage) {
	if err := storage.SetLatest(ctx(t), s, "j", "chk-0"); err != nil {
		t.Fatalf("SetLatest: %v", err)
	}
	const updates = 15
	done := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(readErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			v, err := storage.Latest(ctx(t), s, "j")
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				readErr <- fmt.Errorf("reading the latest pointer during updates: %w", err)
				return
			}
			var n int
			if err == nil {
				if _, serr := fmt.Sscanf(v, "chk-%d", &n); serr != nil || n < 0 || n > updates {
					readErr <- fmt.Errorf("latest pointer was %q during updates, want chk-0..chk-%d", v, updates)
					return
				}
			}
		}
	}()
	for i := 1; i <= updates; i++ {
		if err := storage.SetLatest(ctx(t), s, "j", fmt.Sprintf("chk-%d", i)); err != nil {
			t.Errorf("SetLatest(chk-%d): %v", i, err)
			break
		}
	}
	close(done)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	if v, err := storage.Latest(ctx(t), s, "j"); err != nil || v != fmt.Sprintf("chk-%d", updates) {
		t.Fatalf("final Latest = %q, %v; want chk-%d", v, err, updates)
	}
}

func testContextCancellation(t *testing.T, s storage.Storage) {
	mustWrite(t, s, "exists", []byte("x"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", op, err)
		}
	}
	_, err := s.Create(cancelled, "c/new")
	check("Create", err)
	_, err = s.Open(cancelled, "exists")
	check("Open", err)
	_, err = s.Stat(cancelled, "exists")
	check("Stat", err)
	_, err = s.List(cancelled, "")
	check("List", err)
	check("Delete", s.Delete(cancelled, "exists"))
	check("Rename", s.Rename(cancelled, "exists", "moved"))
	check("SetLatest", storage.SetLatest(cancelled, s, "c", "chk-1"))

	// Commit with a cancelled context: nothing becomes visible, and the writer is finished.
	w, err := s.Create(ctx(t), "c/commit-cancelled")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	check("Commit", w.Commit(cancelled))
	mustNotExist(t, s, "c/commit-cancelled")

	// A writer whose Create context ends can no longer write or commit.
	wctx, wcancel := context.WithCancel(ctx(t))
	w, err = s.Create(wctx, "c/create-ctx")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	wcancel()
	_, err = w.Write([]byte("late"))
	check("Write after Create's context ended", err)
	if err := w.Abort(ctx(t)); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	mustNotExist(t, s, "c/create-ctx")
	mustRead(t, s, "exists", []byte("x"))
}

func testInvalidNames(t *testing.T, s storage.Storage) {
	for _, n := range []string{"", "/abs", "../up", "a/../b", "a//b", "./a", ".tide-tmp.x", "a/.tide-tmp.y"} {
		if _, err := s.Create(ctx(t), n); !errors.Is(err, storage.ErrInvalidName) {
			t.Errorf("Create(%q) = %v, want ErrInvalidName", n, err)
		}
	}
	if _, err := s.Stat(ctx(t), "../x"); !errors.Is(err, storage.ErrInvalidName) {
		t.Errorf("Stat(../x) = %v, want ErrInvalidName", err)
	}
	if err := s.Rename(ctx(t), "a", "../b"); !errors.Is(err, storage.ErrInvalidName) {
		t.Errorf("Rename(a, ../b) = %v, want ErrInvalidName", err)
	}
}
