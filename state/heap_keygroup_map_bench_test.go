package state

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// BenchmarkKeyGroupMapGet looks up WordCount's keys (1000 four-letter words over 128 key
// groups, about 8 per group) in a KeyGroupMap (typed value state), in the Heap backend
// (encoded keys and values: list and map state on the heap) and, as the baseline, in one Go
// map holding the same keys: what splitting the heap state by key group costs per lookup.
func BenchmarkKeyGroupMapGet(b *testing.B) {
	const keyGroups = 128
	keys := make([]string, 1000)
	kgs := make([]int, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("w%03d", i)
		h := fnv.New64a()
		h.Write([]byte(keys[i]))
		kgs[i] = int(h.Sum64() % keyGroups)
	}
	// The order WordCount's input visits them in.
	order := make([]int, 0, 10000)
	for l := range 1000 {
		for w := range 10 {
			order = append(order, (l*31+w*17)%len(keys))
		}
	}
	b.Run("key-group-maps", func(b *testing.B) {
		t := &KeyGroupMap[string, int64]{}
		for i, k := range keys {
			t.Put(kgs[i], k, new(int64))
		}
		b.ResetTimer()
		for n := range b.N {
			i := order[n%len(order)]
			p, _ := t.Get(kgs[i], keys[i])
			*p++
		}
	})
	b.Run("heap-backend", func(b *testing.B) {
		h := NewHeap()
		bkeys := make([][]byte, len(keys))
		for i, k := range keys {
			bkeys[i] = []byte(k)
			if err := h.Put(kgs[i], "counts", bkeys[i], []byte{1}); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for n := range b.N {
			i := order[n%len(order)]
			if _, ok, err := h.Get(kgs[i], "counts", bkeys[i]); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("one-go-map", func(b *testing.B) {
		m := make(map[string]*int64)
		for _, k := range keys {
			m[k] = new(int64)
		}
		b.ResetTimer()
		for n := range b.N {
			i := order[n%len(order)]
			*m[keys[i]]++
		}
	})
}
