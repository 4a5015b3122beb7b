package stream

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileSink writes one line per record (format(v) plus "\n") into part files in dir, exactly
// once: records go to a hidden in-progress file; at a checkpoint the file is closed and
// synced (pre-commit) and recorded in the sink's state as pending; when the checkpoint
// completes the file is renamed to its final, visible name (commit). On restore, pending
// files of the restored checkpoint are committed again (idempotently) and in-progress
// leftovers of older attempts are deleted. When the input ends the last file stays in
// progress: the task's final checkpoint (the first one after the end of input) pre-commits
// it and its completion commits it, so a failure between the end of input and the end of
// the job cannot commit anything twice. Without checkpointing (Runtime.CheckpointingEnabled
// false) the last file is committed at once when the input ends.
//
// Final files are named part-<sink>-[<run id>.]<attempt>-<subtask>-<seq>; readers should ignore names
// starting with ".".
func FileSink[T any](s DataStream[T], name, dir string, format func(T) string) {
	Sink(s, name, func() Operator { return &fileSinkOp[T]{dir: dir, format: format} })
}

const pendingState = "pending"

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
	dir     string
	format  func(T) string
	rt      Runtime
	seq     int
	cur     *os.File
	curW    *bufio.Writer
	curTmp  string
	curFin  string
	pending []pendingFile
}

func (o *fileSinkOp[T]) Open(ctx context.Context, rt Runtime, restored StateReader) error {
	o.rt = rt
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("file sink %s: creating %s: %w", rt.OperatorID, o.dir, err)
	}
	if restored == nil {
		return o.cleanup()
	}
	// Every subtask gets every pending file (Union) and commits all of them: commits are
	// idempotent, and once this subtask has committed them all, leftovers are garbage.
	for _, it := range restored.List(pendingState) {
		p, err := pendingFromItem(it)
		if err != nil {
			return fmt.Errorf("file sink %s: %w", rt.OperatorID, err)
		}
		if err := o.commit(p); err != nil {
			return err
		}
	}
	return o.cleanup()
}

// cleanup deletes this sink's in-progress files left by older attempts (subtask 0 only).
func (o *fileSinkOp[T]) cleanup() error {
	if o.rt.Subtask != 0 {
		return nil
	}
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		return fmt.Errorf("file sink %s: listing %s: %w", o.rt.OperatorID, o.dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		run, attempt, ok := hiddenPart(name, o.rt.OperatorID)
		if !ok || !olderAttempt(run, attempt, o.rt) {
			continue
		}
		if err := os.Remove(filepath.Join(o.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("file sink %s: deleting leftover %s: %w", o.rt.OperatorID, name, err)
		}
	}
	return nil
}

// commit makes a pending file visible; a file already committed is fine.
func (o *fileSinkOp[T]) commit(p pendingFile) error {
	tmp, final := filepath.Join(o.dir, p.tmp), filepath.Join(o.dir, p.final)
	err := os.Rename(tmp, final)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(final); serr == nil {
			return nil
		}
		return fmt.Errorf("file sink %s: committing %s (checkpoint %d): neither the pending file nor the final file exists: %w", o.rt.OperatorID, p.final, p.checkpoint, err)
	}
	return fmt.Errorf("file sink %s: committing %s: %w", o.rt.OperatorID, p.final, err)
}

func (o *fileSinkOp[T]) openFile() error {
	base := partBase(o.rt, o.seq)
	o.seq++
	o.curTmp = "." + base + inProgressSuffix
	o.curFin = partPrefix + base
	f, err := os.OpenFile(filepath.Join(o.dir, o.curTmp), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("file sink %s: creating %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	o.cur = f
	if o.curW == nil {
		o.curW = bufio.NewWriterSize(f, 64*1024)
	} else {
		o.curW.Reset(f)
	}
	return nil
}

func (o *fileSinkOp[T]) Process(v any, _ int64, _ Collector) error {
	if o.cur == nil {
		if err := o.openFile(); err != nil {
			return err
		}
	}
	if _, err := o.curW.WriteString(o.format(v.(T))); err != nil {
		return fmt.Errorf("file sink %s: writing %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	if err := o.curW.WriteByte('\n'); err != nil {
		return fmt.Errorf("file sink %s: writing %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	return nil
}

// preCommit closes and syncs the current file and records it as pending.
func (o *fileSinkOp[T]) preCommit(checkpointID int64) error {
	if o.cur == nil {
		return nil
	}
	f := o.cur
	o.cur = nil
	if err := o.curW.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("file sink %s: flushing %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("file sink %s: syncing %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("file sink %s: closing %s: %w", o.rt.OperatorID, o.curTmp, err)
	}
	o.pending = append(o.pending, pendingFile{tmp: o.curTmp, final: o.curFin, checkpoint: checkpointID})
	return nil
}

func (o *fileSinkOp[T]) Snapshot(checkpointID int64, w StateWriter) error {
	if err := o.preCommit(checkpointID); err != nil {
		return err
	}
	for _, p := range o.pending {
		w.List(pendingState, Union, p.item())
	}
	return nil
}

func (o *fileSinkOp[T]) CheckpointComplete(_ context.Context, checkpointID int64) error {
	kept := o.pending[:0]
	for _, p := range o.pending {
		if p.checkpoint > checkpointID {
			kept = append(kept, p)
			continue
		}
		if err := o.commit(p); err != nil {
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
	if err := o.preCommit(MaxWatermark); err != nil {
		return err
	}
	return o.CheckpointComplete(ctx, MaxWatermark)
}

func (o *fileSinkOp[T]) Close() error {
	if o.cur == nil {
		return nil
	}
	err := o.cur.Close()
	o.cur = nil
	return err
}
