package state

import (
	"fmt"
	"maps"
	"sync"
	"testing"
)

// TestHeapViewIsCopyOnWrite reads a view on another goroutine (as an upload does) while
// the backend overwrites, deletes, appends to and adds flat and nested (map state)
// entries: the view keeps the state of its creation (-race checks nobody writes what it
// reads), and once it is closed the backend writes in place again.
func TestHeapViewIsCopyOnWrite(t *testing.T) {
	h := NewHeap()
	defer h.Close()
	want := fill(t, h, 128, 2000)
	for i := range 300 {
		kg := i % 128
		if err := h.PutEntry(kg, "map", []byte(fmt.Sprint("k", i)), []byte("u"), []byte(fmt.Sprint("m", i))); err != nil {
			t.Fatal(err)
		}
		want[ent{kg, "map", string(AppendEntryKey(nil, []byte(fmt.Sprint("k", i)), []byte("u")))}] = fmt.Sprint("m", i)
		if err := h.Append(kg, "list", []byte(fmt.Sprint("l", i)), []byte("ab")); err != nil {
			t.Fatal(err)
		}
		want[ent{kg, "list", fmt.Sprint("l", i)}] = "ab"
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan map[ent]string)
	go func() {
		m := map[ent]string{}
		// Twice, as the state file's two passes read it.
		for range 2 {
			clear(m)
			_ = v.IterateRange(0, 127, func(kg int, s string, k, val []byte) error {
				m[ent{kg, s, string(k)}] = string(val)
				return nil
			})
		}
		got <- m
	}()
	for e := range want {
		var err error
		switch e.state {
		case "count":
			err = h.Put(e.kg, e.state, []byte(e.key), []byte("changed"))
		case "windows":
			err = h.Delete(e.kg, e.state, []byte(e.key))
		case "map":
			key, _, _ := SplitEntryKey([]byte(e.key))
			if err = h.PutEntry(e.kg, e.state, key, []byte("u"), []byte("changed")); err == nil {
				err = h.PutEntry(e.kg, e.state, key, []byte("new"), []byte("x"))
			}
		case "list":
			err = h.Append(e.kg, e.state, []byte(e.key), []byte("cd"))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Put(1, "new", []byte("x"), []byte("y")); err != nil {
		t.Fatal(err)
	}
	if m := <-got; !maps.Equal(m, want) {
		t.Fatalf("the view changed with the backend: %d entries, want %d", len(m), len(want))
	}
	if b, _, _ := h.Get(3, "list", []byte("l3")); string(b) != "abcd" {
		t.Fatalf("backend's list l3 = %q, want abcd", b)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	// No view open: writes go into the maps in place.
	g, vals := h.groups[0], h.groups[0].flat["count"]
	if err := h.Put(0, "count", []byte("in place"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if h.groups[0] != g || h.groups[0].flat["count"] != vals {
		t.Fatal("a write with no view open copied the key group")
	}
	// A second view again sees its own point in time, and copies only what is written.
	v2, _ := h.View()
	defer v2.Close()
	if err := h.Put(0, "count", []byte("in place"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	if h.groups[0] == g || h.groups[1] == nil {
		t.Fatal("key group 0 not copied, or key group 1 lost")
	}
	if b, _, _ := v2.Get(0, "count", []byte("in place")); string(b) != "1" {
		t.Fatalf("view 2 sees %q, want 1", b)
	}
}

// TestKeyGroupMapSnapshot changes values in place after a snapshot while another
// goroutine reads the snapshot: the subtask gets private copies of the values the
// snapshot shares, the snapshot keeps its values, and after Release values are changed in
// place again.
func TestKeyGroupMapSnapshot(t *testing.T) {
	copies := 0
	m := &KeyGroupMap[int, []int]{Copy: func(v *[]int) (*[]int, error) {
		copies++
		c := append([]int(nil), *v...)
		return &c, nil
	}}
	const keys, maxP = 1000, 16
	kg := func(k int) int { return k % maxP }
	for k := range keys {
		m.Put(kg(k), k, &[]int{k})
	}
	snap := m.Snapshot()
	var wg sync.WaitGroup
	wg.Add(1)
	var bad []string
	go func() {
		defer wg.Done()
		n := 0
		_ = snap.Range(0, maxP-1, func(g int, k int, v *[]int) error {
			n++
			if g != kg(k) || len(*v) != 1 || (*v)[0] != k {
				bad = append(bad, fmt.Sprintf("key %d in key group %d = %v", k, g, *v))
			}
			return nil
		})
		if n != keys {
			bad = append(bad, fmt.Sprintf("%d entries, want %d", n, keys))
		}
	}()
	m.Delete(kg(7), 7)
	m.Delete(kg(keys+1), keys+1) // missing
	if m.Len() != keys-1 {
		t.Fatalf("Len = %d, want %d", m.Len(), keys-1)
	}
	wg.Wait()
	snap.Release()
	// Start over with a snapshot still open for the changes.
	m.Put(kg(7), 7, &[]int{7})
	snap = m.Snapshot()
	wg.Add(1)
	go func() {
		defer wg.Done()
		n := 0
		_ = snap.Range(0, maxP-1, func(g int, k int, v *[]int) error {
			n++
			if len(*v) != 1 || (*v)[0] != k {
				bad = append(bad, fmt.Sprintf("snapshot: key %d = %v", k, *v))
			}
			return nil
		})
		if n != keys {
			bad = append(bad, fmt.Sprintf("snapshot: %d entries, want %d", n, keys))
		}
	}()
	for k := range keys / 2 {
		v, err := m.Get(kg(k), k)
		if err != nil || v == nil {
			t.Fatalf("Get(%d) = %v, %v", k, v, err)
		}
		*v = append(*v, -1)
	}
	if err := m.Range(func(_ int, k int, v *[]int) (bool, error) {
		*v = append(*v, -2)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	m.Put(kg(3), keys+5, &[]int{0})
	m.Delete(kg(4), 4)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if copies != keys {
		t.Fatalf("%d values copied, want each of the %d once", copies, keys)
	}
	if v, _ := m.Get(kg(2), 2); len(*v) != 3 {
		t.Fatalf("key 2 = %v, want [2 -1 -2]", *v)
	}
	snap.Release()
	snap.Release()
	before := copies
	v, _ := m.Get(kg(1), 1)
	v2, _ := m.Get(kg(1), 1)
	if v != v2 || copies != before || m.OpenSnapshots() != 0 {
		t.Fatal("a value was copied with no snapshot open")
	}
}
