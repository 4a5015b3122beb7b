package stream_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// asyncSinkSnapshot takes checkpoint id of sink with a writer that takes deferred writes,
// as the subtask's asynchronous checkpoints do, and returns the writer and Snapshot's
// error; the caller encodes the writer (upload) or releases it.
func asyncSinkSnapshot(t *testing.T, sink stream.Operator, rt stream.Runtime, id int64) (*snapshot.Writer, error) {
	t.Helper()
	w := &snapshot.Writer{}
	w.AllowDeferred()
	return w, sink.Snapshot(id, w.Operator(rt.OperatorID))
}

func upload(w *snapshot.Writer, rt stream.Runtime, id int64) ([]byte, error) {
	var file bytes.Buffer
	h := header(rt)
	h.Checkpoint = id
	_, err := w.EncodeTo(&file, h, nil)
	w.Release()
	return file.Bytes(), err
}

// TestFileSinkAsyncPreCommit: in an asynchronous checkpoint the sink defers making its file
// durable to the upload and goes on writing a new file; the uploaded state names the pending
// file, its completion commits it, and a restore from it commits it too.
func TestFileSinkAsyncPreCommit(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	sink := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
	rt := runtimeFor("sink", 1, 0, 128)
	open(t, sink, rt, nil)
	for _, v := range []string{"a", "b"} {
		if err := sink.Process(v, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	w, err := asyncSinkSnapshot(t, sink, rt, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.Deferred() != 1 {
		t.Fatalf("%d deferred writes, want the pre-commit's one", w.Deferred())
	}
	// The subtask goes on before the upload ran: a new file.
	if err := sink.Process("c", 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := upload(w, rt, 1); err != nil {
		t.Fatal(err)
	}
	if got := committed(t, dir); len(got) != 0 {
		t.Fatalf("visible before completion: %v", got)
	}
	if err := sink.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := committed(t, dir), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("after completing checkpoint 1: %v, want %v", got, want)
	}
	// Checkpoint 2 is given up before its upload (released without running): its file is
	// still pending, and checkpoint 3 carries it and commits it.
	w2, err := asyncSinkSnapshot(t, sink, rt, 2)
	if err != nil {
		t.Fatal(err)
	}
	w2.Release()
	if err := sink.Process("d", 0, nil); err != nil {
		t.Fatal(err)
	}
	w3, err := asyncSinkSnapshot(t, sink, rt, 3)
	if err != nil {
		t.Fatal(err)
	}
	chk3, err := upload(w3, rt, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil { // the job fails before checkpoint 3's completion arrives
		t.Fatal(err)
	}
	if got, want := committed(t, dir), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("before the restore: %v, want %v", got, want)
	}
	rt2 := rt
	rt2.Attempt = 2
	sink2 := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
	open(t, sink2, rt2, restoreFor(t, rt2, [][]byte{chk3}))
	defer sink2.Close()
	if got, want := committed(t, dir), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("after restoring checkpoint 3: %v, want %v", got, want)
	}
}

// TestFileSinkAsyncPreCommitFailureIsFatal: a pre-commit that fails off the subtask's
// goroutine fails the checkpoint's upload, and the sink's next barrier returns ErrFatal
// (the subtask must not go on without the lost file's records).
func TestFileSinkAsyncPreCommitFailureIsFatal(t *testing.T) {
	sink, rt := sinkWithLostFile(t)
	w, err := asyncSinkSnapshot(t, sink, rt, 1)
	if err != nil {
		t.Fatalf("asynchronous Snapshot: %v, want the failure left to the upload", err)
	}
	if _, err := upload(w, rt, 1); !errors.Is(err, stream.ErrFatal) {
		t.Fatalf("upload of checkpoint 1: %v, want the pre-commit's failure", err)
	}
	if err := sink.Process("b", 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := asyncSinkSnapshot(t, sink, rt, 2); !errors.Is(err, stream.ErrFatal) {
		t.Fatalf("Snapshot of checkpoint 2 after a failed pre-commit: %v, want ErrFatal", err)
	}
}
