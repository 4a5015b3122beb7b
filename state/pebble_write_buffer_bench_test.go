package state

import (
	"encoding/binary"
	"testing"
	"time"
)

// BenchmarkPebbleKeyedRecord times CheckableCount --dedup's keyed state work per record on
// pebble (a map entry looked up and written, then a value looked up and written, for a
// key never seen before) with the writes going straight into the database (direct) and
// through the write buffer (buffered). Both instances are fed in alternating chunks so a
// change of machine load hits both alike; it reports ns per record of each and the ratio.
func BenchmarkPebbleKeyedRecord(b *testing.B) {
	open := func(limit int) *PebbleBackend {
		p, err := OpenPebble(PebbleOptions{Dir: b.TempDir(), Name: "bench", MemTableSize: 1 << 20, CacheSize: 8 << 20})
		if err != nil {
			b.Fatal(err)
		}
		p.buf.limit = limit
		b.Cleanup(func() { p.Close() })
		return p
	}
	bes := [2]*PebbleBackend{open(0), open(writeBufferEntries)}
	var took [2]time.Duration
	var n [2]int
	var key [8]byte
	const chunk = 2000
	record := func(p *PebbleBackend, i int) {
		binary.BigEndian.PutUint64(key[:], uint64(i)*0x9e3779b97f4a7c15) // scattered, never repeated
		kg := i % 128
		if _, ok, err := p.GetEntry(kg, "dedup/seen", key[:], key[:]); err != nil || ok {
			b.Fatal(ok, err)
		}
		if err := p.PutEntry(kg, "dedup/seen", key[:], key[:], nil); err != nil {
			b.Fatal(err)
		}
		if _, ok, err := p.Get(kg, "count/acc", key[:]); err != nil || ok {
			b.Fatal(ok, err)
		}
		if err := p.Put(kg, "count/acc", key[:], key[:]); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		for m, p := range bes {
			start := time.Now()
			for range chunk {
				record(p, n[m])
				n[m]++
			}
			took[m] += time.Since(start)
		}
	}
	direct := float64(took[0].Nanoseconds()) / float64(n[0])
	buffered := float64(took[1].Nanoseconds()) / float64(n[1])
	b.ReportMetric(direct, "direct-ns/record")
	b.ReportMetric(buffered, "buffered-ns/record")
	b.ReportMetric(direct/buffered, "speedup")
	b.ReportMetric(float64(n[1]), "records")
}
