package state

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// TestPebbleCompactsAfterOpen checks that the compaction gate opens: a fresh instance and
// one restored from its checkpoint both compact (the gate only holds compactions back
// while pebble.Open runs).
func TestPebbleCompactsAfterOpen(t *testing.T) {
	dir := t.TempDir()
	opts := PebbleOptions{Dir: dir, Name: "gate", MemTableSize: 256 << 10, Logger: slog.New(slog.DiscardHandler)}
	be, err := OpenPebble(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	val := make([]byte, 1000)
	write := func(b *PebbleBackend, round int) {
		for j := range 2000 {
			i := (j * 7919) % 2000 // every key once, in an order that spreads the writes
			val[0], val[1], val[2] = byte(i), byte(i>>8), byte(round)
			if err := b.Put(i%16, "op/s", fmt.Appendf(nil, "key-%06d", i), val); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.applyWrites(); err != nil { // the buffered writes into the memtable
			t.Fatal(err)
		}
		if err := b.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	waitCompacted := func(b *PebbleBackend, what string) {
		deadline := time.Now().Add(2 * time.Minute)
		for b.db.Metrics().Compact.Count == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no compaction ran in 2 minutes; L0 has %d tables", what, b.db.Metrics().Levels[0].TablesCount)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for round := range 5 {
		write(be, round)
	}
	waitCompacted(be, "fresh instance")

	// A restored instance with L0 tables to compact.
	for round := range 5 {
		write(be, 10+round)
	}
	files, err := be.Checkpoint(filepath.Join(dir, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	src := RestoreSource{Files: map[string]string{}}
	for _, f := range files {
		src.Files[f.Name] = filepath.Join(dir, "ckpt", f.Name)
	}
	opts.Name = "restored"
	r, err := OpenPebbleFromCheckpoints(context.Background(), opts, 0, 15, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for round := range 5 {
		write(r, 20+round)
	}
	waitCompacted(r, "restored instance")
	v, ok, err := r.Get(1, "op/s", []byte("key-000001"))
	if err != nil || !ok || v[2] != 24 {
		t.Fatalf("restored instance: key-000001 = %v, %v, %v; want the last round's value", v, ok, err)
	}
}

// TestPebbleRetireStopsCompactions: a retired instance (its subtask cancelled, its state
// thrown away) starts no compaction though L0 holds more tables than the compaction
// threshold (4), still reads and closes. (Nothing writes to a retired instance in tide:
// its operators are closed first; here the writes stay below the L0 stop-writes limit.)
func TestPebbleRetireStopsCompactions(t *testing.T) {
	be, err := OpenPebble(PebbleOptions{Dir: t.TempDir(), Name: "retire", MemTableSize: 256 << 10, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	be.Retire()
	val := make([]byte, 1000)
	const rounds = 8
	for round := range rounds {
		for i := range 100 { // 100 KB: one table per flush
			val[0] = byte(round)
			if err := be.Put(i%16, "op/s", fmt.Appendf(nil, "key-%06d", i), val); err != nil {
				t.Fatal(err)
			}
		}
		if err := be.applyWrites(); err != nil { // the buffered writes into the memtable
			t.Fatal(err)
		}
		if err := be.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // a granted compaction would have started by now
	m := be.db.Metrics()
	if m.Compact.Count != 0 || m.Levels[0].TablesCount != rounds {
		t.Fatalf("retired instance: %d compactions ran, L0 has %d tables; want none and %d", m.Compact.Count, m.Levels[0].TablesCount, rounds)
	}
	if v, ok, err := be.Get(1, "op/s", []byte("key-000001")); err != nil || !ok || v[0] != rounds-1 {
		t.Fatalf("retired instance: key-000001 = %v, %v, %v; want the last round's value", v, ok, err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
}
