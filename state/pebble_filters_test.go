package state

import (
	"fmt"
	"testing"
)

// TestPebbleGetSkipsTablesByBloomFilter writes keys into tables and looks up keys no
// table holds (what a dedup step or a first record of a key does): every table's bloom
// filter answers those without a data block read, in L0 and in L6 (where Pebble reads no
// filter unless the iterator asks it to, and where most keyed state lives).
func TestPebbleGetSkipsTablesByBloomFilter(t *testing.T) {
	for _, bottom := range []bool{false, true} {
		t.Run(map[bool]string{false: "L0", true: "L6"}[bottom], func(t *testing.T) { testGetSkipsTables(t, bottom) })
	}
}

func testGetSkipsTables(t *testing.T, bottom bool) {
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
	if bottom {
		lo, hi := keyGroupBounds(0, 7) // the key groups written
		if err := b.db.Compact(t.Context(), lo, hi, false); err != nil {
			t.Fatal(err)
		}
		m := b.db.Metrics()
		if n := m.Levels[6].TablesCount; n == 0 || m.Levels[0].TablesCount != 0 {
			t.Fatalf("after the manual compaction: %d tables in L0, %d in L6; want all in L6", m.Levels[0].TablesCount, n)
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
		t.Fatalf("bloom filters skipped %d table reads (%d could not), want at least %d: the lookups read no filter", f.Hits, f.Misses, misses/2)
	}
	t.Logf("bloom filters: %d table reads skipped, %d not", f.Hits, f.Misses)
}
