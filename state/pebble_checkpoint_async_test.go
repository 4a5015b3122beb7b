package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
)

// TestCheckpointAsyncHoldsTheBarrierState writes v1 to every key, begins a checkpoint,
// overwrites every key with v2 (several memtables' worth) and deletes some, and restores
// the checkpoint: it holds exactly v1, whether the writes after the barrier raced the
// background flush or not (a checkpoint they overtook is refused, never wrong). The
// barrier's marker shows in no key group.
func TestCheckpointAsyncHoldsTheBarrierState(t *testing.T) {
	const keys = 3000
	dir := t.TempDir()
	opts := PebbleOptions{Dir: dir, Name: "async", MemTableSize: 256 << 10, Logger: slog.New(slog.DiscardHandler)}
	be, err := OpenPebble(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	put := func(round string) {
		for i := range keys {
			if err := be.Put(i%32, "op/s", fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "%s-%05d-%0200d", round, i, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("v1")
	want := collectRange(t, be, 0, 31)
	taken := 0
	for attempt := range 4 {
		ck := filepath.Join(dir, fmt.Sprintf("ckpt-%d", attempt))
		pc, err := be.CheckpointAsync(ck)
		if err != nil {
			t.Fatal(err)
		}
		put(fmt.Sprintf("v2.%d", attempt))
		for i := 0; i < keys; i += 7 {
			if err := be.Delete(i%32, "op/s", fmt.Appendf(nil, "k%05d", i)); err != nil {
				t.Fatal(err)
			}
		}
		files, err := pc.Wait()
		if errors.Is(err, ErrCheckpointOvertaken) {
			t.Logf("attempt %d: %v", attempt, err)
			put("v1")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		taken++
		src := RestoreSource{Files: map[string]string{}}
		for _, f := range files {
			src.Files[f.Name] = filepath.Join(ck, f.Name)
		}
		r, err := OpenPebbleFromCheckpoints(context.Background(), PebbleOptions{Dir: dir, Name: "restored", Logger: slog.New(slog.DiscardHandler)}, 0, 31, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := collectRange(t, r, 0, 31)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("attempt %d: restored %d entries, the barrier had %d", attempt, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("attempt %d: %v restored as %q, at the barrier it was %q", attempt, k, got[k], v)
			}
		}
		put("v1")
	}
	if taken == 0 {
		t.Fatal("every checkpoint was overtaken by later writes")
	}
	if err := be.IterateRange(0, MaxKeyGroups-2, func(kg int, s string, k, v []byte) error {
		if kg >= 32 {
			return fmt.Errorf("an entry in key group %d (state %q key %q): the barrier marker shows", kg, s, k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointOvertakenIsRefused takes the checkpoint after writes later than the
// barrier were flushed: it is refused with ErrCheckpointOvertaken.
func TestCheckpointOvertakenIsRefused(t *testing.T) {
	dir := t.TempDir()
	be, err := OpenPebble(PebbleOptions{Dir: dir, Name: "overtaken", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	if err := be.Put(1, "op/s", []byte("a"), []byte("before")); err != nil {
		t.Fatal(err)
	}
	b := be.db.NewBatch()
	if err := b.Set(barrierMarker, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(be.wo); err != nil {
		t.Fatal(err)
	}
	seq := uint64(b.SeqNum())
	_ = b.Close()
	if err := be.Put(1, "op/s", []byte("a"), []byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := be.applyWrites(); err != nil { // the buffered writes into the memtable
		t.Fatal(err)
	}
	if err := be.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpointAt(be.db, filepath.Join(dir, "ckpt"), seq); !errors.Is(err, ErrCheckpointOvertaken) {
		t.Fatalf("checkpoint holding a write after the barrier: got %v, want ErrCheckpointOvertaken", err)
	}
	if _, err := checkpointAt(be.db, filepath.Join(dir, "ckpt-ok"), seq+1); err != nil {
		t.Fatalf("the same files checked against the later write's sequence number: %v", err)
	}
}
