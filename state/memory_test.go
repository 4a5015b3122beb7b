package state

import (
	"testing"
)

func TestNewMemorySizesMemtablesPerSlot(t *testing.T) {
	for _, c := range []struct {
		size  int64
		slots int
		want  uint64
	}{
		{size: 600 << 20, slots: 1, want: 64 << 20},  // 100 MiB per memtable: capped
		{size: 96 << 20, slots: 2, want: 8 << 20},    // half of 96 MiB over 2 slots × 3 memtables
		{size: 8 << 20, slots: 4, want: minMemTable}, // raised to the minimum
		{size: 30 << 20, slots: 0, want: 5 << 20},    // slots < 1 counts as 1
	} {
		m, err := NewMemory(c.size, c.slots)
		if err != nil {
			t.Fatal(err)
		}
		if m.MemTableSize() != c.want || m.Size() != c.size || m.cache.MaxSize() != c.size {
			t.Errorf("NewMemory(%d, %d): memtable %d, want %d; cache %d", c.size, c.slots, m.MemTableSize(), c.want, m.cache.MaxSize())
		}
		m.Close()
	}
	if _, err := NewMemory(0, 1); err == nil {
		t.Fatal("NewMemory(0) accepted")
	}
}

// TestInstancesShareManagedMemory opens two instances on one budget: both work, and the
// TaskManager dropping its reference first (it ends after its subtasks are cancelled, but
// the order is not guaranteed) does not break them.
func TestInstancesShareManagedMemory(t *testing.T) {
	m, err := NewMemory(16<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	var bs []*PebbleBackend
	for range 2 {
		b, err := OpenPebble(PebbleOptions{Dir: t.TempDir(), Name: "shared", Memory: m})
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	m.Close()
	for i, b := range bs {
		if got := b.db.Metrics(); got.BlockCache.Size > 16<<20 {
			t.Fatalf("instance %d: block cache %d bytes over the 16 MiB budget", i, got.BlockCache.Size)
		}
		for k := range 5000 {
			if err := b.Put(k%64, "s", []byte{byte(k), byte(k >> 8)}, make([]byte, 512)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.applyWrites(); err != nil { // the buffered writes into the memtable
			t.Fatal(err)
		}
		if err := b.db.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := b.Get(7, "s", []byte{7, 0}); err != nil || !ok {
			t.Fatalf("instance %d: %v %v", i, ok, err)
		}
	}
	for _, b := range bs {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
