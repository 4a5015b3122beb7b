package am

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

const recoverJobID = "00000000000000000000000000000abc"

// backends runs f against file:// and, when the mini-cluster runs, hdfs://.
func backends(t *testing.T, f func(t *testing.T, st storage.Storage)) {
	t.Run("file", func(t *testing.T) {
		st, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
	t.Run("hdfs", func(t *testing.T) {
		env := hadooptest.Require(t)
		root := fmt.Sprintf("%s/tide-test/am-recover/%s-%d", env.URI, strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
		st, err := storage.Open(context.Background(), root, storage.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := st.Delete(context.Background(), recoverJobID); err != nil {
				t.Logf("cleaning up %s: %v", root, err)
			}
			st.Close()
		})
		f(t, st)
	})
}

// writeCheckpoint writes a complete checkpoint: two subtask files and the AM's files.
func writeCheckpoint(t *testing.T, s *checkpointStore, id int64) {
	t.Helper()
	ctx := context.Background()
	done := checkpoint.Completed{ID: id, Attempt: 1, Trigger: time.UnixMilli(1_000_000), Duration: time.Second}
	for i := range 2 {
		name := fmt.Sprintf("%s/count-%d.state", checkpoint.ChkDir(s.jobID, id), i)
		data := bytes.Repeat([]byte{byte('a' + i)}, 100+int(id)*10+i)
		if err := storage.WriteFile(ctx, s.st, name, data); err != nil {
			t.Fatal(err)
		}
		done.Handles = append(done.Handles, checkpoint.SubtaskState{Subtask: checkpoint.Subtask{Vertex: "count", Index: i},
			Handles: []checkpoint.StateHandle{{Name: name, Size: int64(len(data))}}})
	}
	if err := s.complete(ctx, done, map[string]int{"count": 128}, map[string][]byte{"source": []byte(fmt.Sprint(id))}); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects log lines safely (discards run on their own goroutines).
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newRecoverCoordinator(t *testing.T, st storage.Storage, retained int) (*checkpointCoordinator, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	a := &AM{log: slog.New(slog.NewTextHandler(logs, nil))}
	c, err := newCheckpointCoordinator(a, Config{JobID: recoverJobID, Storage: st, NumRetained: retained, CheckpointTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

func chkNames(t *testing.T, st storage.Storage) []string {
	t.Helper()
	entries, err := st.List(context.Background(), recoverJobID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func truncate(t *testing.T, st storage.Storage, name string) {
	t.Helper()
	ctx := context.Background()
	data, err := storage.ReadFile(ctx, st, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFile(ctx, st, name, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverChoosesNewestIntactCheckpoint(t *testing.T) {
	stateFile := func(id int64) string { return fmt.Sprintf("%s/count-1.state", checkpoint.ChkDir(recoverJobID, id)) }
	tests := []struct {
		name     string
		retained int
		damage   func(t *testing.T, st storage.Storage)
		want     int64
		left     []string // chk dirs after recovery
		logs     []string // substrings the log must hold
	}{
		{name: "intact newest; incomplete and surplus deleted", retained: 2, want: 3,
			left: []string{"chk-2", "chk-3"}, logs: []string{"deleting incomplete checkpoint", "chk-7"}},
		{name: "truncated file falls back", retained: 3, want: 2,
			damage: func(t *testing.T, st storage.Storage) { truncate(t, st, stateFile(3)) },
			left:   []string{"chk-1", "chk-2", "chk-3"},
			logs:   []string{"falling back", "checkpoint=3", "fallback=2", "count-1.state has"}},
		{name: "missing file falls back", retained: 3, want: 2,
			damage: func(t *testing.T, st storage.Storage) {
				if err := st.Delete(context.Background(), stateFile(3)); err != nil {
					t.Fatal(err)
				}
			},
			left: []string{"chk-1", "chk-2", "chk-3"}, logs: []string{"falling back", "count-1.state is missing"}},
		{name: "missing coordinator file falls back", retained: 3, want: 2,
			damage: func(t *testing.T, st storage.Storage) {
				if err := st.Delete(context.Background(), checkpoint.ChkDir(recoverJobID, 3)+"/"+coordinatorFile); err != nil {
					t.Fatal(err)
				}
			},
			left: []string{"chk-1", "chk-2", "chk-3"}, logs: []string{"falling back", "_coordinator is missing"}},
		{name: "garbage _metadata falls back twice", retained: 3, want: 1,
			damage: func(t *testing.T, st storage.Storage) {
				ctx := context.Background()
				if err := storage.WriteFile(ctx, st, checkpoint.MetadataPath(recoverJobID, 3), []byte("{not json")); err != nil {
					t.Fatal(err)
				}
				if err := st.Delete(ctx, stateFile(2)); err != nil {
					t.Fatal(err)
				}
			},
			left: []string{"chk-1", "chk-2", "chk-3"}, logs: []string{"invalid checkpoint _metadata", "fallback=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backends(t, func(t *testing.T, st storage.Storage) {
				ctx := context.Background()
				s := &checkpointStore{st: st, jobID: recoverJobID}
				for id := int64(1); id <= 3; id++ {
					writeCheckpoint(t, s, id)
				}
				// A checkpoint that never got its _metadata (the AM died while writing it).
				if err := storage.WriteFile(ctx, st, checkpoint.ChkDir(recoverJobID, 7)+"/count-0.state", []byte("partial")); err != nil {
					t.Fatal(err)
				}
				if tt.damage != nil {
					tt.damage(t, st)
				}
				c, logs := newRecoverCoordinator(t, st, tt.retained)
				got, err := c.recover(ctx, nil)
				c.wait()
				if err != nil {
					t.Fatalf("recover: %v\nlog:\n%s", err, logs)
				}
				if int64(got) != tt.want {
					t.Fatalf("recover = checkpoint %d, want %d\nlog:\n%s", got, tt.want, logs)
				}
				if names := chkNames(t, st); !slices.Equal(names, tt.left) {
					t.Errorf("after recovery %s holds %v, want %v", recoverJobID, names, tt.left)
				}
				for _, l := range tt.logs {
					if !strings.Contains(logs.String(), l) {
						t.Errorf("log lacks %q:\n%s", l, logs)
					}
				}
				if src := string(c.coordinatorState(got)["source"]); src != fmt.Sprint(tt.want) {
					t.Errorf("coordinator state of the restore point = %q, want %q", src, fmt.Sprint(tt.want))
				}
				// New checkpoint ids continue above everything seen, damaged or incomplete.
				if c.co.Retained()[len(c.co.Retained())-1] != tt.want {
					t.Errorf("retained %v: newest should be %d", c.co.Retained(), tt.want)
				}
			})
		})
	}
}

func TestRecoverFailsWhenNoCheckpointIsIntact(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Storage) {
		s := &checkpointStore{st: st, jobID: recoverJobID}
		writeCheckpoint(t, s, 1)
		writeCheckpoint(t, s, 2)
		truncate(t, st, checkpoint.ChkDir(recoverJobID, 1)+"/count-0.state")
		truncate(t, st, checkpoint.ChkDir(recoverJobID, 2)+"/count-0.state")
		c, _ := newRecoverCoordinator(t, st, 2)
		_, err := c.recover(context.Background(), nil)
		c.wait()
		if err == nil || !errors.Is(err, errDamagedCheckpoint) || !strings.Contains(err.Error(), "none of the 2 complete checkpoints") {
			t.Fatalf("recover = %v, want an error naming both damaged checkpoints", err)
		}
		for _, want := range []string{"checkpoint 1 ", "checkpoint 2 ", recoverJobID} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
}

func TestRecoverWithoutCheckpointsStartsFresh(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Storage) {
		c, logs := newRecoverCoordinator(t, st, 1)
		got, err := c.recover(context.Background(), nil)
		c.wait()
		if err != nil || got != 0 {
			t.Fatalf("recover = %d, %v; want 0, nil", got, err)
		}
		if !strings.Contains(logs.String(), "starts fresh") {
			t.Errorf("log lacks the fresh start:\n%s", logs)
		}
	})
}

// flakyStorage fails Stat with a transient-looking storage error.
type flakyStorage struct {
	storage.Storage
}

func (f flakyStorage) Stat(_ context.Context, name string) (storage.FileInfo, error) {
	return storage.FileInfo{}, &storage.Error{Op: "stat", Path: name, Kind: storage.ErrUnavailable, Attempts: 6, Err: io.ErrUnexpectedEOF}
}

// TestRecoverDoesNotFallBackWhenStorageFails: an unreachable namenode says nothing about
// the checkpoint; falling back would restore older state than necessary.
func TestRecoverDoesNotFallBackWhenStorageFails(t *testing.T) {
	st, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &checkpointStore{st: st, jobID: recoverJobID}
	writeCheckpoint(t, s, 1)
	writeCheckpoint(t, s, 2)
	c, _ := newRecoverCoordinator(t, flakyStorage{st}, 2)
	_, err = c.recover(context.Background(), nil)
	c.wait()
	if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, errDamagedCheckpoint) {
		t.Fatalf("recover = %v, want the storage error and no fallback", err)
	}
}

func TestHandlePath(t *testing.T) {
	s := &checkpointStore{jobID: "j"}
	tests := []struct{ name, want string }{
		{"j/chk-4/count-0.state", "j/chk-4/count-0.state"},
		{"_coordinator", "j/chk-4/_coordinator"},
		{"sub/file", "j/chk-4/sub/file"},
		{"j/chk-40/x", "j/chk-4/j/chk-40/x"},
	}
	for _, tt := range tests {
		if got := s.handlePath(4, tt.name); got != tt.want {
			t.Errorf("handlePath(4, %q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
