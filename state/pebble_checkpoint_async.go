package state

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
)

// An incremental checkpoint needs the database's files as they were at the barrier. With
// the write-ahead log off, the writes since the last flush are only in the memtable, so
// the synchronous way (Checkpoint) flushes at the barrier and waits: the subtask stops
// for as long as writing the memtable into a table takes (hundreds of milliseconds with
// the 64 MiB memtables of a TaskManager's managed memory).
//
// CheckpointAsync waits for nothing. At the barrier it
//   - commits a marker write, whose sequence number S is the barrier's (every write of
//     the subtask so far has a smaller one, every later write a larger one),
//   - takes a Pebble snapshot (so no compaction zeroes the sequence numbers of later
//     writes: they stay above S in every table),
//   - and seals the memtable (AsyncFlush: later writes go to a new one).
//
// In the background, once the sealed memtable is flushed, it takes the Pebble checkpoint
// (tables hard-linked) and checks the checkpoint's tables against S. Flushes run in
// order, so the checkpoint holds every write up to S; it holds a later write only if the
// next memtable was also flushed before the checkpoint was taken (it filled up in
// between), and then one of its tables has a sequence number above S: the checkpoint is
// refused with ErrCheckpointOvertaken (the caller declines it; the next one is taken
// anew) instead of restoring writes that came after the barrier.

// ErrCheckpointOvertaken: writes after the barrier reached the files before the
// checkpoint was taken.
var ErrCheckpointOvertaken = errors.New("writes after the barrier were flushed before the checkpoint was taken")

// barrierMarker is the key of the marker write: key group 0xffff, beyond any key group
// (maxParallelism is at most 32768), so no iteration of key groups, no restore and no
// savepoint ever sees it (restores excise everything outside their key groups).
var barrierMarker = []byte{0xff, 0xff, 't', 'i', 'd', 'e', '.', 'b', 'a', 'r', 'r', 'i', 'e', 'r'}

// PendingCheckpoint is a checkpoint begun at a barrier by CheckpointAsync.
type PendingCheckpoint struct {
	dir   string
	done  chan struct{}
	files []DBFile
	err   error
}

// Wait returns the checkpoint's files once it is taken (see Checkpoint).
func (c *PendingCheckpoint) Wait() ([]DBFile, error) {
	<-c.done
	return c.files, c.err
}

// CheckpointAsync begins a checkpoint of the database as it is now into dir (which must
// not exist, on the same file system as the instance) and returns at once; Wait gives
// its files. The files do not change afterwards. Close waits for pending checkpoints.
func (p *PebbleBackend) CheckpointAsync(dir string) (*PendingCheckpoint, error) {
	if p.db == nil {
		return nil, ErrClosed
	}
	if err := p.beforeDirect(false); err != nil {
		return nil, err
	}
	b := p.db.NewBatch()
	if err := b.Set(barrierMarker, nil, nil); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("pebble state backend: barrier marker: %w", err)
	}
	if err := b.Commit(p.wo); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("pebble state backend: barrier marker: %w", err)
	}
	seq := uint64(b.SeqNum())
	_ = b.Close()
	snap := p.db.NewSnapshot()
	flushed, err := p.db.AsyncFlush()
	if err != nil {
		_ = snap.Close()
		return nil, fmt.Errorf("pebble state backend: flush before checkpoint: %w", err)
	}
	c := &PendingCheckpoint{dir: dir, done: make(chan struct{})}
	db := p.db
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		defer close(c.done)
		<-flushed
		c.files, c.err = checkpointAt(db, dir, seq)
		if err := snap.Close(); c.err == nil && err != nil {
			c.err = fmt.Errorf("pebble state backend: %w", err)
		}
		if c.err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	return c, nil
}

// checkpointAt takes the Pebble checkpoint into dir and refuses it if it holds a write
// with a sequence number above seq.
func checkpointAt(db *pebble.DB, dir string, seq uint64) ([]DBFile, error) {
	if err := db.Checkpoint(dir); err != nil {
		return nil, fmt.Errorf("pebble state backend: checkpoint into %s: %w", dir, err)
	}
	files, maxSeq, err := listCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	if maxSeq > seq {
		return nil, fmt.Errorf("pebble state backend: checkpoint into %s: a table holds sequence number %d, the barrier's is %d: %w", dir, maxSeq, seq, ErrCheckpointOvertaken)
	}
	return files, nil
}
