package stream_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/tm/snapshot"
)

// sinkWithLostFile opens a file sink (closed when the test ends), writes a record and
// deletes its in-progress file, as a disk that lost it: its pre-commit must fail.
func sinkWithLostFile(t *testing.T) (stream.Operator, stream.Runtime) {
	t.Helper()
	dir := t.TempDir()
	sink := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
	rt := runtimeFor("sink", 1, 0, 128)
	open(t, sink, rt, nil)
	t.Cleanup(func() { _ = sink.Close() })
	if err := sink.Process("a", 0, nil); err != nil {
		t.Fatal(err)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".tide-tmp.*"))
	if len(tmps) != 1 {
		t.Fatalf("in-progress files %v, want one", tmps)
	}
	if err := os.Remove(tmps[0]); err != nil {
		t.Fatal(err)
	}
	return sink, rt
}

// TestFileSinkPreCommitFailureIsFatal: a file whose pre-commit fails has lost its records;
// the sink says so with ErrFatal (the subtask fails and restores instead of declining the
// checkpoint and going on without them).
func TestFileSinkPreCommitFailureIsFatal(t *testing.T) {
	sink, rt := sinkWithLostFile(t)
	var w snapshot.Writer
	err := sink.Snapshot(1, w.Operator(rt.OperatorID))
	if !errors.Is(err, stream.ErrFatal) {
		t.Fatalf("Snapshot after the in-progress file vanished: %v, want ErrFatal", err)
	}
}

// TestFileSinkOutputs: the directories a job's file sinks write into, as the YARN
// submission checks them; unsupported schemes fail the job's build.
func TestFileSinkOutputs(t *testing.T) {
	for _, tc := range []struct {
		dir, uri, err string
		relative      bool
	}{
		{dir: "hdfs://nn:8020/tide/out", uri: "hdfs://nn:8020/tide/out"},
		{dir: "hdfs:///tide/out", uri: "hdfs:///tide/out"},
		{dir: "file:///tmp/out", uri: "file:///tmp/out"},
		{dir: "/tmp/a b/out", uri: "file:///tmp/a%20b/out"},
		{dir: "/tmp/x/../out/", uri: "file:///tmp/out"},
		{dir: "out", relative: true},
		{dir: "./x:y", relative: true},
		{dir: "s3://bucket/out", err: `scheme "s3": want file:// or hdfs://`},
		{dir: "out:1", err: `scheme "out": want file:// or hdfs://`},
		{dir: "file://host/out", err: `file URI host "host"`},
		{dir: "file:out", err: "want file:///absolute/path"},
		{dir: "", err: "empty output directory"},
	} {
		job := fileSinkJob(tc.dir)
		_, err := job.Vertices()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), `file sink "sink"`) {
				t.Errorf("FileSink(%q): %v, want an error naming the sink and %q", tc.dir, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("FileSink(%q): %v", tc.dir, err)
			continue
		}
		outs := job.Outputs()
		if len(outs) != 1 || outs[0].URI != tc.uri || outs[0].Relative() != tc.relative || outs[0].Sink != "sink" {
			t.Errorf("FileSink(%q): outputs %+v, want URI %q relative %v", tc.dir, outs, tc.uri, tc.relative)
		}
		err = outs[0].CheckForCluster("YARN")
		if tc.relative != errors.Is(err, stream.ErrRelativeOutput) {
			t.Errorf("FileSink(%q) on YARN: %v", tc.dir, err)
		}
	}
}

// hdfsCommitted reads the committed lines under uri and the names of the hidden files.
func hdfsCommitted(ctx context.Context, t *testing.T, st storage.Storage) (lines, hidden []string) {
	t.Helper()
	files, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Name, ".") {
			hidden = append(hidden, f.Name)
			continue
		}
		b, err := storage.ReadFile(ctx, st, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Fields(string(b))...)
	}
	sort.Strings(lines)
	return lines, hidden
}

// TestFileSinkOnHDFS: the two-phase commit on the real HDFS mini-cluster: nothing visible
// before a checkpoint completes, a failure (the attempt killed with a pending file of a
// checkpoint that never completed and a file in progress) restores checkpoint 1, commits its
// pending file (again: the first commit had happened) without duplicates, and deletes the
// leftovers; a recovered AM's attempt commits once more, idempotently.
func TestFileSinkOnHDFS(t *testing.T) {
	env := hadooptest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	uri := env.URI + "/tide-test/file-sink-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	root, err := storage.Open(ctx, env.URI+"/", storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.Delete(context.Background(), strings.TrimPrefix(uri, env.URI+"/")); err != nil {
			t.Error(err)
		}
		root.Close()
	})
	st, err := storage.Open(ctx, uri, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	write := func(op stream.Operator, s ...string) {
		t.Helper()
		for _, v := range s {
			if err := op.Process(v, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	rt := runtimeFor("sink", 1, 0, 128)
	rt.RunID, rt.CheckpointingEnabled = "0a1b2c3d", true
	sink := vertexOps(t, fileSinkJob(uri), "n")[1].Operator
	open(t, sink, rt, nil)
	write(sink, "a", "b")
	chk1 := snapshotOp(t, sink, rt, 1)
	if lines, hidden := hdfsCommitted(ctx, t, st); len(lines) != 0 || len(hidden) != 1 {
		t.Fatalf("after the pre-commit: committed %v, hidden %v; want nothing committed, one pending file", lines, hidden)
	}
	if err := sink.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	write(sink, "c")
	_ = snapshotOp(t, sink, rt, 2) // never completes
	write(sink, "d")
	if lines, _ := hdfsCommitted(ctx, t, st); !slices.Equal(lines, []string{"a", "b"}) {
		t.Fatalf("committed %v, want [a b]", lines)
	}
	// The attempt is killed (no Close) and the next one restores checkpoint 1.
	rt2 := rt
	rt2.Attempt = 2
	sink2 := vertexOps(t, fileSinkJob(uri), "n")[1].Operator
	open(t, sink2, rt2, restoreFor(t, rt2, [][]byte{chk1}))
	if lines, hidden := hdfsCommitted(ctx, t, st); !slices.Equal(lines, []string{"a", "b"}) || len(hidden) != 0 {
		t.Fatalf("after the restore: committed %v, hidden %v; want [a b] and no leftovers", lines, hidden)
	}
	write(sink2, "e")
	if err := sink2.EndInput(ctx, nil); err != nil {
		t.Fatal(err)
	}
	final := snapshotOp(t, sink2, rt2, 3)
	// A recovered AM (another run id, attempts from 1) restores the final checkpoint before
	// its completion reached the old attempt, and the old attempt commits too.
	rt3 := rt
	rt3.RunID, rt3.Attempt = "4e5f6a7b", 1
	sink3 := vertexOps(t, fileSinkJob(uri), "n")[1].Operator
	open(t, sink3, rt3, restoreFor(t, rt3, [][]byte{final}))
	if err := sink2.CheckpointComplete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if lines, hidden := hdfsCommitted(ctx, t, st); !slices.Equal(lines, []string{"a", "b", "e"}) || len(hidden) != 0 {
		t.Fatalf("final: committed %v, hidden %v; want [a b e] and nothing hidden", lines, hidden)
	}
	for _, op := range []stream.Operator{sink, sink2, sink3} {
		if err := op.Close(); err != nil {
			t.Error(err)
		}
	}
}
