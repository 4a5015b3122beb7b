package state

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A subtask is the only writer of its Pebble instance, so between two of its own writes
// the database's contents cannot change (compactions move entries, never change them).
// The backend uses that on its hot path, the per-record Get then Put of keyed state:
//
//   - Puts and deletes go into an in-memory write buffer (the newest value or deletion of
//     each key), applied to the database as one batch when it holds writeBufferEntries
//     entries or writeBufferBytes bytes, and before anything else reads or changes the
//     database (a scan, a view, a merge, a range deletion, a checkpoint, a restore).
//   - Gets look in the buffer, then seek one long-lived iterator opened after the last
//     batch: the database holds exactly what it held then. A DB.Get builds its own
//     iterator stack over the memtables and every level for each call; the long-lived
//     iterator keeps its tables open and only seeks.
//
// Profiling CheckableCount --dedup with 10M keys on a TaskManager showed 57% of its CPU in
// DB.Get (a quarter of that setting up per-call iterators) and 10% in DB.Set's commit
// pipeline, one commit per record.

const (
	writeBufferEntries = 16 << 10
	writeBufferBytes   = 4 << 20
)

// bufferedWrite is the newest write of one key: its value, or a deletion.
type bufferedWrite struct {
	value   []byte
	deleted bool
}

// writeBuffer holds the writes not yet applied and the reader of what is applied.
type writeBuffer struct {
	// limit is the entry count at which the buffer is applied (0: writes go straight to
	// the database, reads through DB.Get).
	limit  int
	writes map[string]bufferedWrite
	bytes  int
	// reader sees the database as of the last applied batch (nil: open one when needed).
	reader *pebble.Iterator
	// noL6Filters opens the reader as Pebble does by default, without reading the bottom
	// level's bloom filters (only for the benchmark that measures what they save).
	noL6Filters bool
}

// bufferPut records a put (or a deletion, value nil and deleted) of key, applying the
// buffer when full.
func (p *PebbleBackend) bufferPut(key, value []byte, deleted bool) error {
	if p.buf.limit == 0 {
		var err error
		if deleted {
			err = p.db.Delete(key, p.wo)
		} else {
			err = p.db.Set(key, value, p.wo)
		}
		if err != nil {
			return fmt.Errorf("pebble state backend: write: %w", err)
		}
		return nil
	}
	if p.buf.writes == nil {
		p.buf.writes = make(map[string]bufferedWrite)
	}
	old, had := p.buf.writes[string(key)]
	if had {
		p.buf.bytes -= len(key) + len(old.value)
	}
	w := bufferedWrite{deleted: deleted}
	if !deleted {
		w.value = append(old.value[:0], value...) // the old value is unreachable from now on
	}
	p.buf.writes[string(key)] = w
	p.buf.bytes += len(key) + len(w.value)
	if len(p.buf.writes) >= p.buf.limit || p.buf.bytes >= writeBufferBytes {
		return p.applyWrites()
	}
	return nil
}

// bufferGet returns a copy of key's value: the buffered write, else what the database holds.
func (p *PebbleBackend) bufferGet(key []byte) ([]byte, bool, error) {
	if p.buf.limit == 0 {
		return pebbleGet(p.db, key)
	}
	if w, ok := p.buf.writes[string(key)]; ok {
		if w.deleted {
			return nil, false, nil
		}
		return append([]byte(nil), w.value...), true, nil
	}
	if p.buf.reader == nil {
		it, err := p.db.NewIter(&pebble.IterOptions{UseL6Filters: !p.buf.noL6Filters})
		if err != nil {
			return nil, false, fmt.Errorf("pebble state backend: reader: %w", err)
		}
		p.buf.reader = it
	}
	it := p.buf.reader
	// The default comparer's prefix is the whole key: a prefix seek finds key or nothing,
	// and skips the tables whose bloom filters rule it out. Pebble reads no filter of an
	// L6 table unless asked (UseL6Filters): its filter blocks are the largest, and a
	// lookup of a key that exists reads the data block anyway. Keyed state's lookups are
	// mostly of keys that do not exist yet (a first record of a key, a dedup check), and
	// L6 is where almost all of the state lives (Pebble compacts L0 straight into L6 until
	// the database outgrows LBaseMaxBytes), so without its filters nearly every miss
	// searched an L6 table's index and data block: a CPU profile of CheckableCount --dedup
	// with 4M keys showed a quarter of the TaskManager's CPU there.
	if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
		if err := it.Error(); err != nil {
			return nil, false, fmt.Errorf("pebble state backend: get: %w", err)
		}
		return nil, false, nil
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return nil, false, fmt.Errorf("pebble state backend: get: %w", err)
	}
	return append([]byte(nil), v...), true, nil
}

// applyWrites writes the buffer into the database as one batch. Call it before anything
// reads the database other than bufferGet; the reader is reopened at the next Get.
func (p *PebbleBackend) applyWrites() error {
	if len(p.buf.writes) == 0 {
		return nil
	}
	b := p.db.NewBatch()
	var err error
	for k, w := range p.buf.writes {
		if w.deleted {
			err = b.Delete([]byte(k), nil)
		} else {
			err = b.Set([]byte(k), w.value, nil)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = b.Commit(p.wo)
	}
	err = errors.Join(err, b.Close())
	if err != nil {
		return fmt.Errorf("pebble state backend: applying %d buffered writes: %w", len(p.buf.writes), err)
	}
	clear(p.buf.writes)
	p.buf.bytes = 0
	return p.closeReader()
}

// beforeDirect applies the buffer before an operation that reads or writes the database
// itself, and drops the reader when the operation writes (it must see the write).
func (p *PebbleBackend) beforeDirect(writes bool) error {
	if err := p.applyWrites(); err != nil {
		return err
	}
	if writes {
		return p.closeReader()
	}
	return nil
}

func (p *PebbleBackend) closeReader() error {
	if p.buf.reader == nil {
		return nil
	}
	err := p.buf.reader.Close()
	p.buf.reader = nil
	if err != nil {
		return fmt.Errorf("pebble state backend: closing the reader: %w", err)
	}
	return nil
}
