package storage_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// The test cluster's block size (test/hadoop's launcher sets dfs.blocksize to 1 MiB).
const testBlock = 1 << 20

// TestHDFSBlockUploadSessions commits multi-block files, in memory and spilled, in sessions of
// two blocks, of three, and of the default size (one session for files of a few blocks): every
// byte goes up once, and the file reads back exactly.
func TestHDFSBlockUploadSessions(t *testing.T) {
	env := hadooptest.Require(t)
	for _, tc := range []struct {
		name       string
		bufferSize int
		size       int
		perSession int // 0: the default
	}{
		{"spilled, 7 blocks and 3 bytes, two-block sessions", -1, 7*testBlock + 3, storage.SessionBlocks * testBlock},
		{"in memory, exactly 6 blocks, three-block sessions", 8 << 20, 6 * testBlock, 3 * testBlock},
		{"spilled, 5 blocks, default sessions", -1, 5 * testBlock, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			logger, _ := newRetryWatcher(t)
			s := newHDFS(t, env, storage.Options{Logger: logger, BufferSize: tc.bufferSize, SpillDir: t.TempDir()})
			defer s.Close()
			faults := &uploadFaults{}
			storage.SetUploadFault(s, faults.wrap)
			storage.SetSessionBytes(s, int64(tc.perSession))
			data := testBytes(tc.size)
			err := writeInPieces(ctx, s, "d/f", data)
			per := tc.perSession
			if per == 0 {
				per = tc.size
			}
			want := map[int]int{}
			for off, i := 0, 1; off < tc.size; off, i = off+per, i+1 {
				want[i] = min(per, tc.size-off)
			}
			if got := faults.counts(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("bytes uploaded per session = %v, want %v", got, want)
			}
			checkUploadOutcome(ctx, t, s, data, err, nil, 0)
		})
	}
}

// TestHDFSBlockUploadResumes injects failures into the sessions of multi-block uploads: after
// a transient one the file's lease is recovered and the upload goes on from the bytes HDFS
// holds, so the bytes handed to HDFS add up to the file plus at most one block; after a
// NotReplicatedYetException the rest goes in two-block sessions; a permanent failure returns
// at once; a failure that recurs without progress gives up after the policy's attempts with
// an error that names the file and the block; no temporary file stays.
func TestHDFSBlockUploadResumes(t *testing.T) {
	env := hadooptest.Require(t)
	quick := storage.RetryPolicy{Attempts: 3, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	two := storage.SessionBlocks * testBlock
	for _, tc := range []struct {
		name         string
		size         int
		perSession   int // 0: the default
		faults       *uploadFaults
		wantErr      error // nil: the write succeeds
		attempts     int   // for a failure: the attempts the error reports
		wantBlock    string
		wantSessions int // when not 0
	}{
		{"NotReplicatedYet in the second block of a default session, then two-block sessions", 7*testBlock + 123, 0,
			&uploadFaults{err: errNotReplicatedYet, failAt: map[int]int{1: 3 * testBlock / 2}}, nil, 0, "", 5},
		{"pipeline reset at a block boundary and mid-block", 6*testBlock + 5, two,
			&uploadFaults{err: errPipelineReset, failAt: map[int]int{1: testBlock, 3: testBlock/2 + 7}}, nil, 0, "", 0},
		{"permission denied fails at once", 5 * testBlock, two,
			&uploadFaults{err: errAccessDenied, failAt: map[int]int{2: 100}}, storage.ErrPermission, 1, "block 3 of 5", 0},
		{"NotReplicatedYet at the start every time gives up", 5 * testBlock, 0,
			&uploadFaults{err: errNotReplicatedYet, failAt: map[int]int{1: 0, 2: 0, 3: 0}}, storage.ErrUnavailable, 3, "block 1 of 5", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			logger, _ := newRetryWatcher(t)
			s := newHDFS(t, env, storage.Options{Logger: logger, Retry: quick, BufferSize: -1, SpillDir: t.TempDir()})
			defer s.Close()
			storage.SetUploadFault(s, tc.faults.wrap)
			storage.SetSessionBytes(s, int64(tc.perSession))
			data := testBytes(tc.size)
			err := writeInPieces(ctx, s, "d/f", data)

			counts := tc.faults.counts()
			if tc.wantSessions != 0 && len(counts) != tc.wantSessions {
				t.Errorf("bytes uploaded per session = %v: want %d sessions", counts, tc.wantSessions)
			}
			sent := 0
			for _, n := range counts {
				sent += n
			}
			for session, limit := range tc.faults.failAt {
				if counts[session] != limit {
					t.Errorf("session %d handed %d bytes to HDFS before its injected failure, want %d (all sessions: %v)", session, counts[session], limit, counts)
				}
			}
			if tc.wantErr == nil && (sent < tc.size || sent > tc.size+testBlock) {
				t.Errorf("bytes uploaded per session = %v, %d in all: want between the file's %d and one block more", counts, sent, tc.size)
			}
			checkUploadOutcome(ctx, t, s, data, err, tc.wantErr, tc.attempts)
			if tc.wantBlock != "" && !strings.Contains(fmt.Sprint(err), tc.wantBlock) {
				t.Fatalf("Commit = %v, want it to name %q", err, tc.wantBlock)
			}
		})
	}
}

// datanodeFaults breaks the datanode connection through which the upload's wire bytes pass
// breakAt; with refuse, every connection after that fails its writes too (a datanode that
// stays unreachable). It counts the bytes written to datanodes.
type datanodeFaults struct {
	breakAt int64
	refuse  bool

	mu     sync.Mutex
	wire   int64
	broken bool
}

var errInjectedReset = fmt.Errorf("injected datanode failure: %w", syscall.ECONNRESET)

func (f *datanodeFaults) wrap(c net.Conn) net.Conn { return &faultyConn{Conn: c, f: f} }

func (f *datanodeFaults) state() (wire int64, broken bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wire, f.broken
}

type faultyConn struct {
	net.Conn
	f *datanodeFaults
}

func (c *faultyConn) Write(p []byte) (int, error) {
	f := c.f
	f.mu.Lock()
	if (f.broken && f.refuse) || (!f.broken && f.wire+int64(len(p)) > f.breakAt) {
		f.broken = true
		f.mu.Unlock()
		_ = c.Conn.Close()
		return 0, errInjectedReset
	}
	f.wire += int64(len(p))
	f.mu.Unlock()
	return c.Conn.Write(p)
}

// TestHDFSBlockUploadPipelineBreak breaks the datanode connection in the middle of the third
// block of a 6-block upload in two-block sessions (so in the second session): the upload resumes from what the datanode
// acknowledged, so the bytes sent to the datanodes (payload plus the transfer protocol's
// checksums and headers, under 1 %) stay within the file plus one block.
func TestHDFSBlockUploadPipelineBreak(t *testing.T) {
	env := hadooptest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logger, _ := newRetryWatcher(t)
	s := newHDFS(t, env, storage.Options{Logger: logger, BufferSize: -1, SpillDir: t.TempDir()})
	defer s.Close()
	size := 6*testBlock + 11
	dn := &datanodeFaults{breakAt: 5 * testBlock / 2}
	storage.SetDatanodeConn(s, dn.wrap)
	storage.SetSessionBytes(s, storage.SessionBlocks*testBlock)
	payload := &uploadFaults{}
	storage.SetUploadFault(s, payload.wrap)
	data := testBytes(size)
	err := writeInPieces(ctx, s, "d/f", data)
	checkUploadOutcome(ctx, t, s, data, err, nil, 0)

	wire, broken := dn.state()
	if !broken {
		t.Fatalf("the injected pipeline break never happened (%d bytes sent to datanodes)", wire)
	}
	sent := 0
	for _, n := range payload.counts() {
		sent += n
	}
	if sent > size+testBlock {
		t.Errorf("payload handed to HDFS per session = %v (%d in all), want at most the file's %d bytes plus one block", payload.counts(), sent, size)
	}
	if limit := int64(float64(size+testBlock) * 1.01); wire > limit {
		t.Errorf("%d bytes went to datanodes, want at most %d (the file plus one block, plus 1 %% of protocol overhead)", wire, limit)
	}
	t.Logf("file %d bytes; payload handed to HDFS %d, bytes to datanodes %d, per session %v", size, sent, wire, payload.counts())
}

// TestHDFSBlockUploadPersistentFailure breaks the pipeline in the third block and keeps every
// later datanode connection failing: the commit ends after the policy's attempts with one
// error naming the file, the block and the attempts, and leaves neither the file nor a
// temporary file behind.
func TestHDFSBlockUploadPersistentFailure(t *testing.T) {
	env := hadooptest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logger, _ := newRetryWatcher(t)
	quick := storage.RetryPolicy{Attempts: 3, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	s := newHDFS(t, env, storage.Options{Logger: logger, Retry: quick, BufferSize: -1, SpillDir: t.TempDir()})
	defer s.Close()
	dn := &datanodeFaults{breakAt: 5 * testBlock / 2, refuse: true}
	storage.SetDatanodeConn(s, dn.wrap)
	data := testBytes(6 * testBlock)
	err := writeInPieces(ctx, s, "d/f", data)
	checkUploadOutcome(ctx, t, s, data, err, storage.ErrUnavailable, 3)
	if !strings.Contains(err.Error(), "block 3 of 6") || !errors.Is(err, errInjectedReset) {
		t.Fatalf("Commit = %v, want it to name block 3 of 6 and the datanode failure", err)
	}
	t.Logf("the error as a user sees it: %v", err)
}
