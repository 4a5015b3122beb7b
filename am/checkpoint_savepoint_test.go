package am

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/storage"
)

// savepointJob is the job shape writeCheckpoint's checkpoints fit: a keyed vertex with
// maxParallelism 128 and a source whose enumerator state the AM keeps.
func savepointJob(countMaxP int, withSource bool) *jobgraph.JobGraph {
	g := &jobgraph.JobGraph{Name: "counting", Vertices: []jobgraph.Vertex{{ID: "count", Parallelism: 2, MaxParallelism: countMaxP}}}
	if withSource {
		g.Vertices = append(g.Vertices, jobgraph.Vertex{ID: "source", Parallelism: 2})
	}
	return g
}

// takeSavepoint writes checkpoints 1 and 2 of recoverJobID into st and copies checkpoint
// 2 into a savepoint under st's savepoints/ directory, the way POST /savepoints does; it
// returns the savepoint's URI.
func takeSavepoint(t *testing.T, st storage.Storage) string {
	t.Helper()
	s := &checkpointStore{st: st, jobID: recoverJobID}
	writeCheckpoint(t, s, 1)
	writeCheckpoint(t, s, 2)
	a := &AM{cfg: Config{JobID: recoverJobID, Storage: st}}
	loc, err := a.copySavepoint(context.Background(), strings.TrimSuffix(st.URI(), "/")+"/savepoints", savepointDirName(recoverJobID), 2)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// inStorage maps a URI under st's root to its name in st.
func inStorage(t *testing.T, st storage.Storage, uri string) string {
	t.Helper()
	name, ok := strings.CutPrefix(uri, strings.TrimSuffix(st.URI(), "/")+"/")
	if !ok {
		t.Fatalf("%s is not under %s", uri, st.URI())
	}
	return name
}

func TestLoadSavepoint(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(t *testing.T, st storage.Storage, sp string)
		graph   *jobgraph.JobGraph
		allow   bool
		suffix  string
		wantErr []string // empty: loads
		dropped []string
		wantSrc bool
	}{
		{name: "intact", graph: savepointJob(128, true), wantSrc: true},
		{name: "named by its _metadata", graph: savepointJob(128, true), suffix: "/_metadata", wantSrc: true},
		{name: "no _metadata", graph: savepointJob(128, true),
			damage: func(t *testing.T, st storage.Storage, sp string) {
				if err := st.Delete(context.Background(), path.Join(sp, checkpoint.MetadataFile)); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: []string{"has no _metadata", "not a complete savepoint"}},
		{name: "truncated state file", graph: savepointJob(128, true),
			damage:  func(t *testing.T, st storage.Storage, sp string) { truncate(t, st, path.Join(sp, "count-1.state")) },
			wantErr: []string{"checkpoint is damaged", "count-1.state has", "checkpoint 2 of job " + recoverJobID}},
		{name: "missing coordinator state", graph: savepointJob(128, true),
			damage: func(t *testing.T, st storage.Storage, sp string) {
				if err := st.Delete(context.Background(), path.Join(sp, coordinatorFile)); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: []string{"_coordinator is missing"}},
		{name: "undecodable _metadata", graph: savepointJob(128, true),
			damage: func(t *testing.T, st storage.Storage, sp string) {
				if err := storage.WriteFile(context.Background(), st, path.Join(sp, checkpoint.MetadataFile), []byte("{")); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: []string{"invalid checkpoint _metadata"}},
		{name: "other maxParallelism", graph: savepointJob(64, true),
			wantErr: []string{`vertex "count" has maxParallelism 128 in the savepoint but 64 in job counting`}},
		{name: "vertex gone", graph: savepointJob(128, false),
			wantErr: []string{"state of vertices source that job counting does not have", "--allowNonRestoredState"}},
		{name: "vertex gone, allowed", graph: savepointJob(128, false), allow: true, dropped: []string{"source"}},
		{name: "another job entirely", graph: &jobgraph.JobGraph{Name: "words", Vertices: []jobgraph.Vertex{{ID: "tokenize", Parallelism: 1}}},
			wantErr: []string{"vertices count, source that job words does not have (its vertices: tokenize)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backends(t, func(t *testing.T, st storage.Storage) {
				loc := takeSavepoint(t, st)
				if tt.damage != nil {
					tt.damage(t, st, inStorage(t, st, loc))
				}
				sp, dropped, err := loadSavepoint(context.Background(), loc+tt.suffix, tt.graph, tt.allow)
				if len(tt.wantErr) > 0 {
					if err == nil || !errors.Is(err, errBadSavepoint) {
						t.Fatalf("loadSavepoint = %v, want a refusal wrapping errBadSavepoint", err)
					}
					for _, w := range append(tt.wantErr, loc) {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q lacks %q", err, w)
						}
					}
					return
				}
				if err != nil {
					t.Fatalf("loadSavepoint: %v", err)
				}
				if sp.location != loc || sp.md.CheckpointID != 2 || sp.md.JobID != recoverJobID {
					t.Errorf("loaded %s checkpoint %d of %s, want %s checkpoint 2 of %s", sp.location, sp.md.CheckpointID, sp.md.JobID, loc, recoverJobID)
				}
				if got := sp.storageURI + "/" + sp.dir; got != loc {
					t.Errorf("storage %s + dir %s = %s, want %s", sp.storageURI, sp.dir, got, loc)
				}
				if !slices.Equal(dropped, tt.dropped) {
					t.Errorf("dropped %v, want %v", dropped, tt.dropped)
				}
				if got, ok := sp.coord["source"]; ok != tt.wantSrc || (ok && string(got) != "2") {
					t.Errorf("coordinator state %q (present %v), want present %v with the savepoint's %q", got, ok, tt.wantSrc, "2")
				}
				if got, want := sp.resolve(recoverJobID+"/chk-2/count-0.state"), sp.dir+"/count-0.state"; got != want {
					t.Errorf("resolve = %s, want %s", got, want)
				}
			})
		})
	}
}

func TestLoadSavepointMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, loc := range []string{dir + "/savepoint-nope", "file://" + dir + "/nope/savepoint-x"} {
		_, _, err := loadSavepoint(context.Background(), loc, savepointJob(128, true), false)
		if err == nil || !errors.Is(err, errBadSavepoint) || !strings.Contains(err.Error(), "savepoint") {
			t.Errorf("loadSavepoint(%s) = %v, want a refusal", loc, err)
		}
	}
}

func TestSplitSavepointPath(t *testing.T) {
	tests := []struct {
		in, storage, dir, err string
	}{
		{in: "/sp/savepoint-1", storage: "file:///sp", dir: "savepoint-1"},
		{in: "/sp/savepoint-1/", storage: "file:///sp", dir: "savepoint-1"},
		{in: "/sp/savepoint-1/_metadata", storage: "file:///sp", dir: "savepoint-1"},
		{in: "file:///a/b/savepoint-1", storage: "file:///a/b", dir: "savepoint-1"},
		{in: "hdfs://nn:8020/savepoints/savepoint-1", storage: "hdfs://nn:8020/savepoints", dir: "savepoint-1"},
		{in: "hdfs:///savepoint-1", storage: "hdfs:///", dir: "savepoint-1"},
		{in: "savepoints/savepoint-1", err: "expected an absolute path"},
		{in: "", err: "expected an absolute path"},
		{in: "/", err: "not the root"},
		{in: "hdfs://nn:8020/", err: "not the root"},
		{in: "hdfs://nn:8020/%zz", err: "invalid URL escape"},
		{in: "a/b://c", err: "expected an absolute path or a URI"},
	}
	for _, tt := range tests {
		st, dir, err := splitSavepointPath(tt.in)
		if tt.err != "" {
			if err == nil || !errors.Is(err, errBadSavepoint) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("splitSavepointPath(%q) = %q, %q, %v; want an error with %q", tt.in, st, dir, err, tt.err)
			}
			continue
		}
		if err != nil || st != tt.storage || dir != tt.dir {
			t.Errorf("splitSavepointPath(%q) = %q, %q, %v; want %q, %q", tt.in, st, dir, err, tt.storage, tt.dir)
		}
	}
}

func FuzzSplitSavepointPath(f *testing.F) {
	for _, s := range []string{"/sp/savepoint-1", "hdfs://nn:8020/a/savepoint-2/_metadata", "file:///x", "/", "a/b", "hdfs://h/%zz", "/a/../.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		st, dir, err := splitSavepointPath(in)
		if err != nil {
			if !errors.Is(err, errBadSavepoint) {
				t.Fatalf("splitSavepointPath(%q): error %v does not wrap errBadSavepoint", in, err)
			}
			return
		}
		if dir == "" || dir == "." || dir == ".." || strings.Contains(dir, "/") {
			t.Fatalf("splitSavepointPath(%q) = dir %q: want one path element", in, dir)
		}
		if !strings.Contains(st, "://") {
			t.Fatalf("splitSavepointPath(%q) = storage %q: want a URI", in, st)
		}
	})
}

// TestRecoverFromSavepoint: with no checkpoint of its own the job restores the
// savepoint, whose files the TaskManagers are told where to find, and new checkpoint ids
// continue above its id; once the job has a checkpoint of its own, that one wins.
func TestRecoverFromSavepoint(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Storage) {
		ctx := context.Background()
		loc := takeSavepoint(t, st)
		own, err := storage.Open(ctx, strings.TrimSuffix(st.URI(), "/")+"/own", storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer own.Close()
		c, logs := newRecoverCoordinator(t, own, 1)
		c.fromSavepoint = loc
		got, err := c.recover(ctx, savepointJob(128, true))
		c.wait()
		if err != nil || got != 2 {
			t.Fatalf("recover = %d, %v; want the savepoint's checkpoint 2\n%s", got, err, logs)
		}
		loc2 := c.restoreLocation(2)
		if loc2 == nil || loc2.GetStorageUri()+"/"+loc2.GetDir() != loc {
			t.Errorf("restore location of checkpoint 2 = %v, want %s", loc2, loc)
		}
		if c.restoreLocation(3) != nil {
			t.Errorf("checkpoint 3 is the job's own, but it has a restore location")
		}
		if c.restorePath(2) != loc {
			t.Errorf("restore path %s, want %s", c.restorePath(2), loc)
		}
		if string(c.coordinatorState(2)["source"]) != "2" {
			t.Errorf("coordinator state of the restore point = %q, want the savepoint's", c.coordinatorState(2)["source"])
		}
		now := time.Now()
		c.co.NewAttempt(now, 1)
		next, err := c.co.Trigger(now, 1, []checkpoint.Subtask{{Vertex: "count", Index: 0}})
		if err != nil || next != 3 {
			t.Errorf("first own checkpoint id = %d, %v; want 3 (above the savepoint's 2)", next, err)
		}

		// The job's own checkpoint in state.checkpoints.dir wins over --fromSavepoint.
		writeCheckpoint(t, &checkpointStore{st: own, jobID: recoverJobID}, 5)
		c, logs = newRecoverCoordinator(t, own, 1)
		c.fromSavepoint = loc
		got, err = c.recover(ctx, savepointJob(128, true))
		c.wait()
		if err != nil || got != 5 {
			t.Fatalf("recover = %d, %v; want the job's own checkpoint 5\n%s", got, err, logs)
		}
		if c.restoreLocation(5) != nil || !strings.Contains(logs.String(), "not from the savepoint") {
			t.Errorf("own checkpoint 5 restored with a savepoint location, or no warning:\n%s", logs)
		}

		// A refused savepoint stops the start.
		empty, err := storage.Open(ctx, strings.TrimSuffix(st.URI(), "/")+"/empty", storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer empty.Close()
		c, _ = newRecoverCoordinator(t, empty, 1)
		c.fromSavepoint = loc
		if _, err := c.recover(ctx, savepointJob(64, true)); !errors.Is(err, errBadSavepoint) || !strings.Contains(err.Error(), recoverJobID) {
			t.Errorf("recover with an unfitting savepoint = %v, want a refusal naming the job", err)
		}
		c.wait()
	})
}

func TestCheckpointPins(t *testing.T) {
	var p checkpointPins
	if p.deferDelete(1) {
		t.Fatal("an unpinned checkpoint's delete was put off")
	}
	if p.unpin(1) {
		t.Fatal("unpin of an unpinned checkpoint asked for a delete")
	}
	p.pin(2)
	p.pin(2)
	if !p.deferDelete(2) {
		t.Fatal("a pinned checkpoint was not protected")
	}
	if p.unpin(2) {
		t.Fatal("the delete ran while one pin remained")
	}
	if !p.unpin(2) {
		t.Fatal("the last unpin did not hand back the put-off delete")
	}
	if p.unpin(2) || p.deferDelete(2) {
		t.Fatal("state left behind after the last unpin")
	}
	p.pin(3)
	if p.unpin(3) {
		t.Fatal("unpin asked for a delete nobody requested")
	}
}
