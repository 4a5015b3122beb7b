package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPebbleWriteBufferMatchesHeap runs the same random operations (puts, deletes, gets,
// map entries, appends, range deletions, scans, views) on a pebble backend whose write
// buffer is applied every few writes and on the heap backend: every read answers the
// same, whether the entry it reads is buffered, applied since the reader opened, or
// older than the reader. A view taken with writes buffered holds them, and does not see
// later ones.
func TestPebbleWriteBufferMatchesHeap(t *testing.T) {
	for _, limit := range []int{1, 7, 1000} {
		t.Run(fmt.Sprintf("buffer-%d", limit), func(t *testing.T) {
			p, err := OpenPebble(PebbleOptions{Dir: t.TempDir(), Name: "buffer", MemTableSize: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.buf.limit = limit
			h := NewHeap()
			for _, be := range []Nested{p, h} {
				if err := be.DeclareNested("m"); err != nil {
					t.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(uint64(limit), 11))
			key := func() []byte { return fmt.Appendf(nil, "k%d", rng.IntN(40)) }
			var views [][2]View
			for op := range 2000 {
				kg, k := rng.IntN(4), key()
				v := fmt.Appendf(nil, "v%d", op)
				switch r := rng.IntN(100); {
				case r < 30:
					same(t, op, "put", p.Put(kg, "s", k, v), h.Put(kg, "s", k, v))
				case r < 40:
					same(t, op, "delete", p.Delete(kg, "s", k), h.Delete(kg, "s", k))
				case r < 60:
					pv, pok, perr := p.Get(kg, "s", k)
					hv, hok, herr := h.Get(kg, "s", k)
					if perr != nil || herr != nil || pok != hok || string(pv) != string(hv) {
						t.Fatalf("op %d: get %d/%s: pebble %q %v %v, heap %q %v %v", op, kg, k, pv, pok, perr, hv, hok, herr)
					}
				case r < 70:
					sub := key()
					same(t, op, "put entry", p.PutEntry(kg, "m", k, sub, v), h.PutEntry(kg, "m", k, sub, v))
				case r < 75:
					sub := key()
					same(t, op, "delete entry", p.DeleteEntry(kg, "m", k, sub), h.DeleteEntry(kg, "m", k, sub))
				case r < 82:
					sub := key()
					pv, pok, perr := p.GetEntry(kg, "m", k, sub)
					hv, hok, herr := h.GetEntry(kg, "m", k, sub)
					if perr != nil || herr != nil || pok != hok || string(pv) != string(hv) {
						t.Fatalf("op %d: get entry %d/%s/%s: pebble %q %v %v, heap %q %v %v", op, kg, k, sub, pv, pok, perr, hv, hok, herr)
					}
				case r < 85:
					same(t, op, "append", p.Append(kg, "l", k, v), h.Append(kg, "l", k, v))
				case r < 87:
					same(t, op, "delete entries", p.DeleteEntries(kg, "m", k), h.DeleteEntries(kg, "m", k))
				case r < 90:
					pv, pok, perr := p.Get(kg, "l", k)
					hv, hok, herr := h.Get(kg, "l", k)
					if perr != nil || herr != nil || pok != hok || string(pv) != string(hv) {
						t.Fatalf("op %d: get list %d/%s: pebble %q %v %v, heap %q %v %v", op, kg, k, pv, pok, perr, hv, hok, herr)
					}
				case r < 95:
					if got, want := scanAll(t, p), scanAll(t, h); !slices.Equal(got, want) {
						t.Fatalf("op %d: scan: pebble %v, heap %v", op, got, want)
					}
				case r < 97:
					pv, err := p.View()
					if err != nil {
						t.Fatal(err)
					}
					hv, err := h.View()
					if err != nil {
						t.Fatal(err)
					}
					views = append(views, [2]View{pv, hv})
				default:
					if len(views) == 0 {
						continue
					}
					vs := views[0]
					views = views[1:]
					if got, want := scanAll(t, vs[0]), scanAll(t, vs[1]); !slices.Equal(got, want) {
						t.Fatalf("op %d: view taken earlier: pebble %v, heap %v", op, got, want)
					}
					_ = vs[0].Close()
					_ = vs[1].Close()
				}
			}
			for _, vs := range views {
				_ = vs[0].Close()
				_ = vs[1].Close()
			}
		})
	}
}

func same(t *testing.T, op int, what string, perr, herr error) {
	t.Helper()
	if perr != nil || herr != nil {
		t.Fatalf("op %d: %s: pebble %v, heap %v", op, what, perr, herr)
	}
}

// scanAll lists every entry of key groups 0-3 as "kg state key=value", sorted.
func scanAll(t *testing.T, r Reader) []string {
	t.Helper()
	var out []string
	err := r.IterateRange(0, 3, func(kg int, state string, key, value []byte) error {
		out = append(out, fmt.Sprintf("%d %s %x=%s", kg, state, key, value))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
