package stream

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tidestream/tide/storage"
)

// FileSink writes one line per record (format(v) plus "\n") into part files in dir, exactly
// once, through the storage layer: dir is file:///abs, hdfs://namenode:port/dir, hdfs:///dir
// (fs.defaultFS), or a local path (a relative one resolves against each TaskManager's working
// directory); any other scheme fails the job's build.
//
// Two-phase commit: records go to an uncommitted storage writer (in progress: a hidden
// temporary file on file://, a local buffer on hdfs://); at a checkpoint the writer is
// committed under a hidden pending name (pre-commit) and recorded in the sink's state; when
// the checkpoint completes the pending file is renamed to its final, visible name (commit).
// On restore, pending files of the restored checkpoint are committed again (idempotently)
// and leftovers of older attempts (pending files of checkpoints that never completed,
// uncommitted files of killed writers) are deleted. When the input ends the last file stays
// in progress: the task's final checkpoint (the first one after the end of input)
// pre-commits it and its completion commits it, so a failure between the end of input and
// the end of the job cannot commit anything twice. Without checkpointing
// (Runtime.CheckpointingEnabled false) the last file is committed at once when the input
// ends.
//
// Final files are named part-<sink>-[<run id>.]<attempt>-<subtask>-<seq>; readers should
// ignore names starting with ".". An output directory belongs to one job: a sink deletes the
// hidden files of its name left there by other AM processes or earlier attempts.
func FileSink[T any](s DataStream[T], name, dir string, format func(T) string) {
	fileSink(s, name, dir, &fileSinkOp[T]{format: format})
}

// FileSinkAppend is FileSink with a formatter that appends v's line (without the "\n") to
// dst and returns the extended slice, as strconv.AppendInt does: the sink formats straight
// into its write buffer, so a record costs no string of its own (a Sprintf per record
// allocates the string and boxes its arguments).
func FileSinkAppend[T any](s DataStream[T], name, dir string, appendLine func(dst []byte, v T) []byte) {
	fileSink(s, name, dir, &fileSinkOp[T]{appendLine: appendLine})
}

func fileSink[T any](s DataStream[T], name, dir string, proto *fileSinkOp[T]) {
	out, err := ParseOutput(name, dir)
	if err != nil {
		s.job.fail(fmt.Errorf("job %q: %w", s.job.name, err))
	}
	s.job.outputs = append(s.job.outputs, out)
	Sink(s, name, func() Operator {
		return &fileSinkOp[T]{out: out, format: proto.format, appendLine: proto.appendLine}
	})
}

// ErrFatal marks an operator error the subtask cannot go on after, not even by declining the
// checkpoint: the subtask must fail and restore (a file sink whose pre-commit failed has lost
// the records of that file).
var ErrFatal = errors.New("the subtask must fail and restore")

const pendingState = "pending"

// closeTimeout bounds the abort of an in-progress file when the sink closes.
const closeTimeout = 30 * time.Second

type pendingFile struct {
	tmp, final string
	checkpoint int64
}

func (p pendingFile) item() ListItem {
	b := binary.AppendVarint(nil, p.checkpoint)
	b = AppendString(b, p.tmp)
	return ListItem{ID: p.final, Data: b}
}

func pendingFromItem(it ListItem) (pendingFile, error) {
	d := NewDecoder(it.Data)
	p := pendingFile{final: it.ID, checkpoint: d.Varint(), tmp: d.String()}
	if d.Err() != nil {
		return p, fmt.Errorf("decoding pending file %q: %w", it.ID, d.Err())
	}
	return p, nil
}

type fileSinkOp[T any] struct {
	BaseOperator
	out    Output
	format func(T) string
	// appendLine, when set instead of format, appends a record's line to the write buffer.
	appendLine func(dst []byte, v T) []byte
	rt         Runtime
	ctx        context.Context // the subtask's: bounds the writers
	st         storage.Storage
	seq        int
	cur        storage.Writer
	curW       *bufio.Writer
	curTmp     string
	curFin     string
	pending    []pendingFile
	// running are the pre-commits still running off the subtask's goroutine.
	running []*preCommitRun
}

func (o *fileSinkOp[T]) Open(ctx context.Context, rt Runtime, restored StateReader) error {
	o.rt, o.ctx = rt, ctx
	uri, err := o.out.resolve()
	if err != nil {
		return err
	}
	if o.st, err = storage.Open(ctx, uri, storage.Options{Logger: rt.Logger}); err != nil {
		return fmt.Errorf("file sink %s: %w", rt.OperatorID, err)
	}
	if restored == nil {
		return o.cleanup(ctx)
	}
	// Every subtask gets every pending file (Union) and commits all of them: commits are
	// idempotent, and once this subtask has committed them all, leftovers are garbage.
	for _, it := range restored.List(pendingState) {
		p, err := pendingFromItem(it)
		if err != nil {
			return fmt.Errorf("file sink %s: %w", rt.OperatorID, err)
		}
		if err := o.commit(ctx, p); err != nil {
			return err
		}
	}
	return o.cleanup(ctx)
}

// cleanup deletes this sink's hidden files left by older attempts (subtask 0 only): pending
// files of checkpoints that never completed and uncommitted files of killed writers.
func (o *fileSinkOp[T]) cleanup(ctx context.Context) error {
	if o.rt.Subtask != 0 {
		return nil
	}
	garbage := func(name string) bool {
		run, attempt, ok := hiddenPart(name, o.rt.OperatorID)
		return ok && olderAttempt(run, attempt, o.rt)
	}
	swept, err := storage.SweepUncommitted(ctx, o.st, "", garbage)
	if err != nil {
		return fmt.Errorf("file sink %s: deleting uncommitted leftovers: %w", o.rt.OperatorID, err)
	}
	files, err := o.st.List(ctx, "")
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("file sink %s: %w", o.rt.OperatorID, err)
	}
	deleted := 0
	for _, f := range files {
		if f.IsDir || !garbage(f.Name) {
			continue
		}
		if err := o.st.Delete(ctx, f.Name); err != nil {
			return fmt.Errorf("file sink %s: deleting leftover %s: %w", o.rt.OperatorID, f.Name, err)
		}
		deleted++
	}
	if deleted+len(swept) > 0 && o.rt.Logger != nil {
		o.rt.Logger.Info("deleted leftovers of older attempts", "dir", o.st.URI(), "pending", deleted, "uncommitted", len(swept))
	}
	return nil
}

// commit makes a pending file visible; a file already committed is fine.
func (o *fileSinkOp[T]) commit(ctx context.Context, p pendingFile) error {
	err := o.st.Rename(ctx, p.tmp, p.final)
	if err == nil {
		return nil
	}
	if errors.Is(err, storage.ErrNotFound) {
		if _, serr := o.st.Stat(ctx, p.final); serr == nil {
			return nil
		}
		return fmt.Errorf("file sink %s: committing %s (checkpoint %d): neither the pending file nor the final file exists: %w", o.rt.OperatorID, p.final, p.checkpoint, err)
	}
	return fmt.Errorf("file sink %s: committing %s (checkpoint %d): %w", o.rt.OperatorID, p.final, p.checkpoint, err)
}

func (o *fileSinkOp[T]) openFile() error {
	base := partBase(o.rt, o.seq)
	o.seq++
	o.curTmp = "." + base + pendingSuffix
	o.curFin = partPrefix + base
	w, err := o.st.Create(o.ctx, o.curTmp)
	if err != nil {
		return fmt.Errorf("file sink %s: creating %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	o.cur = w
	if o.curW == nil {
		o.curW = bufio.NewWriterSize(w, 64*1024)
	} else {
		o.curW.Reset(w)
	}
	return nil
}

func (o *fileSinkOp[T]) link(next Collector) Collector { return linkTyped[T](o, next) }

func (o *fileSinkOp[T]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(T), ts, out)
}

func (o *fileSinkOp[T]) processTyped(v T, _ int64, _ Collector) error {
	if o.cur == nil {
		if err := o.openFile(); err != nil {
			return err
		}
	}
	var err error
	if o.appendLine != nil {
		// Formatted into the buffer's free space; a line longer than that is appended to a
		// new slice, which Write copies in.
		_, err = o.curW.Write(append(o.appendLine(o.curW.AvailableBuffer(), v), '\n'))
	} else if _, err = o.curW.WriteString(o.format(v)); err == nil {
		err = o.curW.WriteByte('\n')
	}
	if err != nil {
		return fmt.Errorf("file sink %s: writing %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	return nil
}

// preCommit commits the current file under its pending name and records it as pending. A
// failure loses the file's records: the error is fatal (ErrFatal), the subtask restores.
func (o *fileSinkOp[T]) preCommit(checkpointID int64) error {
	w, p, err := o.detach(checkpointID)
	if err != nil || w == nil {
		return err
	}
	if err := o.commitPending(w, p); err != nil {
		return err
	}
	o.pending = append(o.pending, p)
	return nil
}

// detach flushes the current file and takes it off the sink (the next record opens a new
// one); nil when no file is open.
func (o *fileSinkOp[T]) detach(checkpointID int64) (storage.Writer, pendingFile, error) {
	w := o.cur
	if w == nil {
		return nil, pendingFile{}, nil
	}
	o.cur = nil
	p := pendingFile{tmp: o.curTmp, final: o.curFin, checkpoint: checkpointID}
	if err := o.curW.Flush(); err != nil {
		_ = w.Abort(o.ctx)
		return nil, p, fmt.Errorf("file sink %s: flushing %s: %w: %w", o.rt.OperatorID, p.tmp, err, ErrFatal)
	}
	return w, p, nil
}

// commitPending makes w durable under p's pending name (file://: fsync and rename; hdfs://:
// the upload of the file's buffer).
func (o *fileSinkOp[T]) commitPending(w storage.Writer, p pendingFile) error {
	if err := w.Commit(o.ctx); err != nil {
		return fmt.Errorf("file sink %s: pre-committing %s for checkpoint %d: %w: %w", o.rt.OperatorID, p.tmp, p.checkpoint, err, ErrFatal)
	}
	return nil
}

// Snapshot pre-commits the current file and writes the pending files into the state. In an
// asynchronous checkpoint the pre-commit runs off the subtask's goroutine while it goes on
// with a new file (sink_file_precommit.go); the checkpoint's upload waits for it.
func (o *fileSinkOp[T]) Snapshot(checkpointID int64, w StateWriter) error {
	if err := o.awaitPreCommits(math.MaxInt64); err != nil {
		return err
	}
	if aw, ok := asyncWriter(w); ok {
		if err := o.preCommitAsync(checkpointID, aw); err != nil {
			return err
		}
	} else if err := o.preCommit(checkpointID); err != nil {
		return err
	}
	for _, p := range o.pending {
		w.List(pendingState, Union, p.item())
	}
	return nil
}

func (o *fileSinkOp[T]) CheckpointComplete(ctx context.Context, checkpointID int64) error {
	// Checkpoint checkpointID completed, so its own pre-commit is done; an earlier one whose
	// checkpoint was given up may still run.
	if err := o.awaitPreCommits(checkpointID); err != nil {
		return err
	}
	kept := o.pending[:0]
	for _, p := range o.pending {
		if p.checkpoint > checkpointID {
			kept = append(kept, p)
			continue
		}
		if err := o.commit(ctx, p); err != nil {
			return err
		}
	}
	o.pending = kept
	return nil
}

// EndInput flushes the current file. With checkpointing it stays in progress until the
// final checkpoint pre-commits it; without, it is committed now.
func (o *fileSinkOp[T]) EndInput(ctx context.Context, _ Collector) error {
	if o.rt.CheckpointingEnabled {
		if o.cur == nil {
			return nil
		}
		if err := o.curW.Flush(); err != nil {
			return fmt.Errorf("file sink %s: flushing %s at end of input: %w", o.rt.OperatorID, o.curTmp, err)
		}
		return nil
	}
	if err := o.awaitPreCommits(math.MaxInt64); err != nil {
		return err
	}
	if err := o.preCommit(MaxWatermark); err != nil {
		return err
	}
	return o.CheckpointComplete(ctx, MaxWatermark)
}

// Close discards the file in progress (its records are replayed from the last checkpoint),
// waits for pre-commits still running (they stop early when the subtask was cancelled) and
// releases the storage.
func (o *fileSinkOp[T]) Close() error {
	err := o.awaitPreCommits(math.MaxInt64)
	if o.ctx != nil && o.ctx.Err() != nil {
		err = nil // cancelled: the records are replayed from the last checkpoint anyway
	}
	if o.cur != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		err = o.cur.Abort(ctx)
		cancel()
		o.cur = nil
	}
	if o.st != nil {
		err = errors.Join(err, o.st.Close())
		o.st = nil
	}
	return err
}
