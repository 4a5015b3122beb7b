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

// BenchmarkPebbleL6Filters times the same per-record work on two buffered instances that
// already hold 1M records' state (2M entries, flushed and compacted into L6, where Pebble
// keeps a small database), one reading L6's bloom filters on lookups (tide's setting) and
// one without (Pebble's default). Fed in alternating chunks; it reports ns per record of
// each and the ratio (records/s with filters over records/s without).
func BenchmarkPebbleL6Filters(b *testing.B) {
	const prefill = 1_000_000
	var key [8]byte
	record := func(b *testing.B, p *PebbleBackend, i int, miss bool) {
		binary.BigEndian.PutUint64(key[:], uint64(i)*0x9e3779b97f4a7c15) // scattered, never repeated
		kg := i % 128
		if _, ok, err := p.GetEntry(kg, "dedup/seen", key[:], key[:]); err != nil || ok != !miss {
			b.Fatal(ok, err)
		}
		if err := p.PutEntry(kg, "dedup/seen", key[:], key[:], nil); err != nil {
			b.Fatal(err)
		}
		if _, ok, err := p.Get(kg, "count/acc", key[:]); err != nil || ok != !miss {
			b.Fatal(ok, err)
		}
		if err := p.Put(kg, "count/acc", key[:], key[:]); err != nil {
			b.Fatal(err)
		}
	}
	open := func(noL6 bool) *PebbleBackend {
		p, err := OpenPebble(PebbleOptions{Dir: b.TempDir(), Name: "bench", MemTableSize: 4 << 20, CacheSize: 32 << 20})
		if err != nil {
			b.Fatal(err)
		}
		p.buf.noL6Filters = noL6
		b.Cleanup(func() { p.Close() })
		for i := range prefill {
			record(b, p, i, true)
		}
		lo, hi := keyGroupBounds(0, 127)
		if err := p.applyWrites(); err != nil {
			b.Fatal(err)
		}
		if err := p.db.Compact(b.Context(), lo, hi, false); err != nil {
			b.Fatal(err)
		}
		return p
	}
	bes := [2]*PebbleBackend{open(true), open(false)}
	var took [2]time.Duration
	n := [2]int{prefill, prefill}
	const chunk = 2000
	for b.Loop() {
		for m, p := range bes {
			start := time.Now()
			for range chunk {
				record(b, p, n[m], true)
				n[m]++
			}
			took[m] += time.Since(start)
		}
	}
	without := float64(took[0].Nanoseconds()) / float64(n[0]-prefill)
	with := float64(took[1].Nanoseconds()) / float64(n[1]-prefill)
	b.ReportMetric(without, "no-L6-filter-ns/record")
	b.ReportMetric(with, "L6-filter-ns/record")
	b.ReportMetric(without/with, "speedup")
	b.ReportMetric(float64(n[1]-prefill), "records")
}
