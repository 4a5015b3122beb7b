package state

import (
	"bytes"
	"fmt"
	"maps"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
)

// TestNestedConformance runs the map-state (entries under a key) and list-state (append)
// operations against both backends.
func TestNestedConformance(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			t.Run("entries", func(t *testing.T) { testEntries(t, open(t)) })
			t.Run("entries in views and flat iteration", func(t *testing.T) { testEntriesView(t, open(t)) })
			t.Run("entries restored at another parallelism", func(t *testing.T) { testEntriesRescale(t, open) })
			t.Run("append", func(t *testing.T) { testAppend(t, open(t)) })
			t.Run("closed", func(t *testing.T) {
				b := open(t)
				_ = b.Close()
				n := b.(Nested)
				if err := n.PutEntry(1, "m", nil, nil, nil); err != ErrClosed {
					t.Fatalf("PutEntry after Close: %v", err)
				}
				if err := n.Append(1, "l", nil, nil); err != ErrClosed {
					t.Fatalf("Append after Close: %v", err)
				}
			})
		})
	}
}

func entries(t *testing.T, n Nested, kg int, state, key string) map[string]string {
	t.Helper()
	got := map[string]string{}
	if err := n.IterateEntries(kg, state, []byte(key), func(sub, v []byte) error {
		got[string(sub)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func testEntries(t *testing.T, b Backend) {
	defer b.Close()
	n := b.(Nested)
	put := func(key, sub, v string) {
		t.Helper()
		if err := n.PutEntry(5, "m", []byte(key), []byte(sub), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	// Keys "a" and "ab" must not see each other's entries though one prefixes the other.
	put("a", "x", "1")
	put("a", "y", "2")
	put("ab", "", "3")
	put("a", "", "4")
	if err := n.PutEntry(6, "m", []byte("a"), []byte("x"), []byte("other kg")); err != nil {
		t.Fatal(err)
	}
	if err := n.PutEntry(5, "m2", []byte("a"), []byte("x"), []byte("other state")); err != nil {
		t.Fatal(err)
	}
	if got, want := entries(t, n, 5, "m", "a"), map[string]string{"x": "1", "y": "2", "": "4"}; !maps.Equal(got, want) {
		t.Fatalf("entries of a = %v, want %v", got, want)
	}
	if got := entries(t, n, 5, "m", "ab"); !maps.Equal(got, map[string]string{"": "3"}) {
		t.Fatalf("entries of ab = %v", got)
	}
	if v, ok, err := n.GetEntry(5, "m", []byte("a"), []byte("y")); err != nil || !ok || string(v) != "2" {
		t.Fatalf("GetEntry(a, y) = %q %v %v", v, ok, err)
	}
	if _, ok, _ := n.GetEntry(5, "m", []byte("a"), []byte("z")); ok {
		t.Fatal("GetEntry of a missing entry found it")
	}
	if err := n.DeleteEntry(5, "m", []byte("a"), []byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := n.DeleteEntry(5, "m", []byte("a"), []byte("never")); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, n, 5, "m", "a"); !maps.Equal(got, map[string]string{"x": "1", "": "4"}) {
		t.Fatalf("after DeleteEntry: %v", got)
	}
	if err := n.DeleteEntries(5, "m", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, n, 5, "m", "a"); len(got) != 0 {
		t.Fatalf("after DeleteEntries: %v", got)
	}
	for _, c := range []struct {
		kg         int
		state, key string
		want       map[string]string
	}{{5, "m", "ab", map[string]string{"": "3"}}, {6, "m", "a", map[string]string{"x": "other kg"}},
		{5, "m2", "a", map[string]string{"x": "other state"}}} {
		if got := entries(t, n, c.kg, c.state, c.key); !maps.Equal(got, c.want) {
			t.Fatalf("DeleteEntries(5, m, a) changed kg %d state %s key %s: %v", c.kg, c.state, c.key, got)
		}
	}
	// The last key group works too (its range has no key group after it).
	last := MaxKeyGroups - 1
	if err := n.PutEntry(last, "m", []byte("k"), []byte("s"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := n.DeleteEntries(last, "m", []byte("k")); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, n, last, "m", "k"); len(got) != 0 {
		t.Fatalf("last key group after DeleteEntries: %v", got)
	}
	if err := n.PutEntry(MaxKeyGroups, "m", nil, nil, nil); err == nil {
		t.Fatal("key group 65536 accepted")
	}
}

func testEntriesView(t *testing.T, b Backend) {
	defer b.Close()
	n := b.(Nested)
	for i := range 10 {
		if err := n.PutEntry(2, "m", []byte("key"), fmt.Appendf(nil, "u%d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Flat reads see entries under their stored key.
	ek := AppendEntryKey(nil, []byte("key"), []byte("u3"))
	if v, ok, err := b.Get(2, "m", ek); err != nil || !ok || string(v) != "v3" {
		t.Fatalf("flat Get of an entry = %q %v %v", v, ok, err)
	}
	v, err := b.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := n.DeleteEntries(2, "m", []byte("key")); err != nil {
		t.Fatal(err)
	}
	if err := n.PutEntry(2, "m", []byte("key"), []byte("new"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	got := collectRange(t, v, 0, 3)
	if len(got) != 10 {
		t.Fatalf("view after the map was cleared: %d entries, want the 10 of before", len(got))
	}
	for e, val := range got {
		key, sub, err := SplitEntryKey([]byte(e.key))
		if err != nil || string(key) != "key" || "v"+string(sub[1:]) != val {
			t.Fatalf("view entry %q=%q: %q %q %v", e.key, val, key, sub, err)
		}
	}
	if got := collectRange(t, b, 0, 3); len(got) != 1 {
		t.Fatalf("live state after clear and put: %v", got)
	}
}

func testEntriesRescale(t *testing.T, open openFunc) {
	const maxP, keys = 32, 60
	src := open(t)
	defer src.Close()
	want := map[ent]string{}
	for i := range keys {
		kg := jobgraph.KeyGroupFor(uint64(i)*0x9E3779B97F4A7C15, maxP)
		for j := range i % 4 {
			key, sub := fmt.Sprintf("k%d", i), fmt.Sprintf("u%d", j)
			if err := src.(Nested).PutEntry(kg, "m", []byte(key), []byte(sub), []byte(key+sub)); err != nil {
				t.Fatal(err)
			}
			want[ent{kg, "m", string(AppendEntryKey(nil, []byte(key), []byte(sub)))}] = key + sub
		}
	}
	view, err := src.View()
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	// Restore into three subtasks; the first gets the flat entries before it declares the
	// state nested (a restore that runs before the operator opens), the others after.
	got := map[ent]string{}
	for i, r := range [][2]int{{0, 9}, {10, 20}, {21, 31}} {
		dst := open(t)
		defer dst.Close()
		if i > 0 {
			if err := dst.(Nested).DeclareNested("m"); err != nil {
				t.Fatal(err)
			}
		}
		if err := view.IterateRange(r[0], r[1], func(kg int, s string, k, v []byte) error {
			return dst.Put(kg, s, k, v)
		}); err != nil {
			t.Fatal(err)
		}
		if err := dst.(Nested).DeclareNested("m"); err != nil {
			t.Fatal(err)
		}
		maps.Copy(got, collectRange(t, dst, 0, maxP-1))
		for e, v := range inRange(want, r[0], r[1]) {
			key, sub, _ := SplitEntryKey([]byte(e.key))
			if g, ok, err := dst.(Nested).GetEntry(e.kg, "m", key, sub); err != nil || !ok || string(g) != v {
				t.Fatalf("subtask %d: GetEntry(%d, %s, %s) = %q %v %v, want %q", i, e.kg, key, sub, g, ok, err, v)
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("restored %d entries, want %d", len(got), len(want))
	}
}

func testAppend(t *testing.T, b Backend) {
	defer b.Close()
	n := b.(Nested)
	app := func(v string) {
		t.Helper()
		if err := n.Append(1, "l", []byte("k"), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	app("a")
	app("b")
	view, err := b.View()
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	app("c")
	if v, ok, err := b.Get(1, "l", []byte("k")); err != nil || !ok || string(v) != "abc" {
		t.Fatalf("after three appends: %q %v %v", v, ok, err)
	}
	if v, _, _ := view.Get(1, "l", []byte("k")); string(v) != "ab" {
		t.Fatalf("view taken after two appends shows %q", v)
	}
	var it []string
	if err := b.Iterate("l", 0, 3, func(_ int, k, v []byte) error {
		it = append(it, string(k)+"="+string(v))
		return nil
	}); err != nil || len(it) != 1 || it[0] != "k=abc" {
		t.Fatalf("iterate: %v %v", it, err)
	}
	if err := b.Put(1, "l", []byte("k"), []byte("X")); err != nil {
		t.Fatal(err)
	}
	app("d")
	if v, _, _ := b.Get(1, "l", []byte("k")); string(v) != "Xd" {
		t.Fatalf("append after put: %q", v)
	}
	if err := b.Delete(1, "l", []byte("k")); err != nil {
		t.Fatal(err)
	}
	app("e")
	if v, _, _ := b.Get(1, "l", []byte("k")); string(v) != "e" {
		t.Fatalf("append after delete: %q", v)
	}
	if v, _, _ := view.Get(1, "l", []byte("k")); string(v) != "ab" {
		t.Fatalf("view changed by later writes: %q", v)
	}
}

func FuzzSplitEntryKey(f *testing.F) {
	f.Add(AppendEntryKey(nil, []byte("key"), []byte("user key")))
	f.Add([]byte{0x80})
	f.Add([]byte{3, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		key, sub, err := SplitEntryKey(b)
		if err != nil {
			return
		}
		if !bytes.Equal(AppendEntryKey(nil, key, sub), b) {
			t.Fatalf("SplitEntryKey(%x) does not round-trip", b)
		}
		// Entries of a key sort inside its prefix range, and before every longer key's.
		p := AppendEntryPrefix(nil, key)
		if !bytes.HasPrefix(b, p) {
			t.Fatalf("entry %x outside its key's prefix %x", b, p)
		}
		if end := prefixEnd(p); end != nil && bytes.Compare(b, end) >= 0 {
			t.Fatalf("entry %x sorts at or after its key's end %x", b, end)
		}
	})
}
