package state

import (
	"fmt"
	"testing"
)

// BenchmarkListAppend compares list state's append through Append (a Pebble merge: one
// write) with a read-modify-write (Get, then Put of the longer value), for lists that grow
// to 200 elements of 16 bytes over 100 keys.
func BenchmarkListAppend(b *testing.B) {
	elem := make([]byte, 16)
	keys := make([][]byte, 100)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%d", i)
	}
	for _, mode := range []string{"append", "read-modify-write"} {
		for name, open := range map[string]func(b *testing.B) Backend{
			"hashmap": func(*testing.B) Backend { return NewHeap() },
			"pebble": func(b *testing.B) Backend {
				p, err := OpenPebble(PebbleOptions{Dir: b.TempDir(), Name: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				return p
			},
		} {
			b.Run(mode+"/"+name, func(b *testing.B) {
				be := open(b)
				defer be.Close()
				n := 0
				for b.Loop() {
					k := keys[n%len(keys)]
					if n%(len(keys)*200) == 0 {
						for _, k := range keys {
							_ = be.Delete(1, "l", k)
						}
					}
					n++
					if mode == "append" {
						if err := be.(Nested).Append(1, "l", k, elem); err != nil {
							b.Fatal(err)
						}
						continue
					}
					v, _, err := be.Get(1, "l", k)
					if err == nil {
						err = be.Put(1, "l", k, append(v, elem...))
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
