package stream

// Asynchronous pre-commit. At a barrier the file sink only flushes its current file and
// takes it off (the next record opens a new one); making it durable under its pending name
// (an fsync and a rename on file://, the whole upload on hdfs://) runs on a goroutine of its
// own while the subtask goes on processing. The checkpoint's upload waits for it (a deferred
// write that writes nothing), so the checkpoint is acknowledged only once the file is
// durable, and its completion, which commits the file, comes after that. A pre-commit that
// fails has lost its file's records: the checkpoint fails, and the sink's next call (the
// next barrier, a completion, the end of input) returns the error as ErrFatal, so the
// subtask fails and restores instead of going on without them.

// preCommitRun is one pre-commit running off the subtask's goroutine.
type preCommitRun struct {
	checkpoint int64
	done       chan struct{}
	err        error // set before done closes
}

func (r *preCommitRun) wait() error {
	<-r.done
	return r.err
}

// preCommitAsync detaches the current file, records it as pending for checkpointID and
// starts its pre-commit; w's upload waits for it.
func (o *fileSinkOp[T]) preCommitAsync(checkpointID int64, w AsyncStateWriter) error {
	f, p, err := o.detach(checkpointID)
	if err != nil || f == nil {
		return err
	}
	run := &preCommitRun{checkpoint: checkpointID, done: make(chan struct{})}
	go func() {
		defer close(run.done)
		run.err = o.commitPending(f, p)
	}()
	o.running = append(o.running, run)
	o.pending = append(o.pending, p)
	// Run twice by a streaming upload (sizes, then bytes): waiting is idempotent.
	w.Defer(func(StateWriter) error { return run.wait() }, func() {})
	return nil
}

// awaitPreCommits waits for the running pre-commits of checkpoints up to upTo and returns
// the first failure (ErrFatal).
func (o *fileSinkOp[T]) awaitPreCommits(upTo int64) error {
	var first error
	kept := o.running[:0]
	for _, r := range o.running {
		if r.checkpoint > upTo {
			kept = append(kept, r)
			continue
		}
		if err := r.wait(); err != nil && first == nil {
			first = err
		}
	}
	clear(o.running[len(kept):])
	o.running = kept
	return first
}
