package state

import (
	"fmt"
	"testing"
)

// TestPebbleGetSkipsTablesByBloomFilter writes keys into tables and looks up keys no
// table holds (what a dedup step or a first record of a key does): every table's bloom
// filter answers those without a data block read.
func TestPebbleGetSkipsTablesByBloomFilter(t *testing.T) {
	b, err := OpenPebble(PebbleOptions{Dir: t.TempDir(), Name: "filters"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for round := range 3 { // three flushed tables
		for i := range 1000 {
			if err := b.Put(i%8, "s", fmt.Appendf(nil, "key-%d-%d", round, i), []byte("v")); err != nil {
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
	const misses = 500
	for i := range misses {
		if _, ok, err := b.Get(i%8, "s", fmt.Appendf(nil, "absent-%d", i)); err != nil || ok {
			t.Fatalf("absent key %d: found=%v err=%v", i, ok, err)
		}
	}
	if v, ok, err := b.Get(5, "s", []byte("key-1-5")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("present key: %q %v %v", v, ok, err)
	}
	f := b.db.Metrics().Filter
	if f.Hits < misses/2 {
		t.Fatalf("bloom filters skipped %d table reads (%d could not), want at least %d: the tables have no filters", f.Hits, f.Misses, misses/2)
	}
	t.Logf("bloom filters: %d table reads skipped, %d not", f.Hits, f.Misses)
}
