package state

import (
	"bytes"
	"fmt"
	"maps"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
)

type openFunc func(t *testing.T) Backend

func backends() map[string]openFunc {
	return map[string]openFunc{
		"hashmap": func(t *testing.T) Backend { return NewHeap() },
		"pebble": func(t *testing.T) Backend {
			b, err := OpenPebble(PebbleOptions{Dir: t.TempDir(), Name: "conformance"})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}

type ent struct {
	kg         int
	state, key string
}

func collectRange(t *testing.T, r Reader, from, to int) map[ent]string {
	t.Helper()
	got := map[ent]string{}
	last := -1
	err := r.IterateRange(from, to, func(kg int, s string, k, v []byte) error {
		if kg < from || kg > to {
			return fmt.Errorf("key group %d outside %d..%d", kg, from, to)
		}
		if kg < last {
			return fmt.Errorf("key group %d after %d: not in key-group order", kg, last)
		}
		last = kg
		got[ent{kg, s, string(k)}] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestConformance(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			t.Run("put get delete", func(t *testing.T) { testPutGetDelete(t, open(t)) })
			t.Run("iterate by key-group range", func(t *testing.T) { testIterate(t, open(t)) })
			t.Run("view is a point in time", func(t *testing.T) { testView(t, open(t)) })
			t.Run("restore at another parallelism", func(t *testing.T) { testRescale(t, open) })
			t.Run("closed", func(t *testing.T) { testClosed(t, open(t)) })
		})
	}
}

func testPutGetDelete(t *testing.T, b Backend) {
	defer b.Close()
	key := []byte("k1")
	if _, ok, err := b.Get(3, "s", key); err != nil || ok {
		t.Fatalf("get of a missing key: ok=%v err=%v", ok, err)
	}
	val := []byte("v1")
	if err := b.Put(3, "s", key, val); err != nil {
		t.Fatal(err)
	}
	val[0], key[0] = 'X', 'X' // the backend must have copied both
	if v, ok, err := b.Get(3, "s", []byte("k1")); err != nil || !ok || string(v) != "v1" {
		t.Fatalf("get = %q %v %v, want v1", v, ok, err)
	}
	// Same key in another state or key group is another entry.
	if _, ok, _ := b.Get(3, "t", []byte("k1")); ok {
		t.Fatal("state t sees state s's key")
	}
	if _, ok, _ := b.Get(4, "s", []byte("k1")); ok {
		t.Fatal("key group 4 sees key group 3's key")
	}
	// A state whose name prefixes another's must not see its keys.
	if err := b.Put(3, "ss", []byte(""), []byte("other")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.Get(3, "s", []byte("s")); ok {
		t.Fatal("state s sees state ss's key through the name prefix")
	}
	if err := b.Put(3, "s", []byte("k1"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := b.Get(3, "s", []byte("k1")); string(v) != "v2" {
		t.Fatalf("overwrite: got %q", v)
	}
	if err := b.Delete(3, "s", []byte("k1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(3, "s", []byte("never there")); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if _, ok, _ := b.Get(3, "s", []byte("k1")); ok {
		t.Fatal("deleted key still there")
	}
	if err := b.Put(MaxKeyGroups, "s", nil, nil); err == nil {
		t.Fatal("key group 65536 accepted")
	}
}

func fill(t *testing.T, b Backend, maxP, keys int) map[ent]string {
	want := map[ent]string{}
	for i := range keys {
		for _, s := range []string{"count", "windows"} {
			k := fmt.Sprintf("key-%d", i)
			kg := jobgraph.KeyGroupFor(uint64(i)*0x9E3779B97F4A7C15, maxP)
			v := fmt.Sprintf("%s=%d", s, i)
			if err := b.Put(kg, s, []byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
			want[ent{kg, s, k}] = v
		}
	}
	return want
}

func inRange(m map[ent]string, from, to int) map[ent]string {
	out := map[ent]string{}
	for e, v := range m {
		if e.kg >= from && e.kg <= to {
			out[e] = v
		}
	}
	return out
}

func testIterate(t *testing.T, b Backend) {
	defer b.Close()
	const maxP = 128
	want := fill(t, b, maxP, 500)
	for _, r := range [][2]int{{0, maxP - 1}, {0, 0}, {17, 63}, {100, 127}, {5, 4}} {
		if got := collectRange(t, b, r[0], r[1]); !maps.Equal(got, inRange(want, r[0], r[1])) {
			t.Errorf("range %v: %d entries, want %d", r, len(got), len(inRange(want, r[0], r[1])))
		}
	}
	// Iterate of one state.
	n := 0
	if err := b.Iterate("count", 0, maxP-1, func(kg int, k, v []byte) error {
		if want[ent{kg, "count", string(k)}] != string(v) {
			return fmt.Errorf("unexpected %d/%s=%s", kg, k, v)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 500 {
		t.Fatalf("Iterate(count) saw %d entries, want 500", n)
	}
	if err := b.IterateRange(-1, 3, func(int, string, []byte, []byte) error { return nil }); err == nil {
		t.Fatal("range -1..3 accepted")
	}
	stop := fmt.Errorf("stop")
	if err := b.IterateRange(0, maxP-1, func(int, string, []byte, []byte) error { return stop }); err != stop {
		t.Fatalf("fn's error not returned: %v", err)
	}
}

func testView(t *testing.T, b Backend) {
	defer b.Close()
	want := fill(t, b, 128, 200)
	v, err := b.View()
	if err != nil {
		t.Fatal(err)
	}
	// Change everything after the view: overwrite, delete, add.
	for e := range want {
		if e.state == "count" {
			if err := b.Put(e.kg, e.state, []byte(e.key), []byte("changed")); err != nil {
				t.Fatal(err)
			}
		} else if err := b.Delete(e.kg, e.state, []byte(e.key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put(1, "new", []byte("x"), []byte("y")); err != nil {
		t.Fatal(err)
	}
	if got := collectRange(t, v, 0, 127); !maps.Equal(got, want) {
		t.Fatalf("view changed with the backend: %d entries, want %d", len(got), len(want))
	}
	for e, val := range want {
		if got, ok, err := v.Get(e.kg, e.state, []byte(e.key)); err != nil || !ok || string(got) != val {
			t.Fatalf("view get %v = %q %v %v, want %q", e, got, ok, err, val)
		}
		break
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.IterateRange(0, 127, func(int, string, []byte, []byte) error { return nil }); err == nil {
		t.Fatal("closed view still iterates")
	}
}

// testRescale snapshots state written at p=2 and restores it into p=5 then p=3 backends,
// each reading only the key groups it owns.
func testRescale(t *testing.T, open openFunc) {
	const maxP = 128
	var want map[ent]string
	var views []View
	src := []Backend{open(t), open(t)}
	for i, b := range src {
		from, to := jobgraph.KeyGroupRange(maxP, 2, i)
		all := fill(t, b, maxP, 1000)
		// A subtask holds only its own key groups.
		for e := range all {
			if e.kg < from || e.kg > to {
				if err := b.Delete(e.kg, e.state, []byte(e.key)); err != nil {
					t.Fatal(err)
				}
			}
		}
		want = all
		v, err := b.View()
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	for _, p := range []int{5, 3} {
		var next []View
		for i := range p {
			from, to := jobgraph.KeyGroupRange(maxP, p, i)
			dst := open(t)
			for _, v := range views {
				if err := v.IterateRange(from, to, func(kg int, s string, k, val []byte) error {
					return dst.Put(kg, s, k, val)
				}); err != nil {
					t.Fatal(err)
				}
			}
			if got := collectRange(t, dst, 0, maxP-1); !maps.Equal(got, inRange(want, from, to)) {
				t.Fatalf("p=%d subtask %d (key groups %d..%d): %d entries, want %d", p, i, from, to, len(got), len(inRange(want, from, to)))
			}
			v, err := dst.View()
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, v)
			t.Cleanup(func() { dst.Close() })
		}
		for _, v := range views {
			v.Close()
		}
		views = next
	}
	for _, v := range views {
		v.Close()
	}
	for _, b := range src {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func testClosed(t *testing.T, b Backend) {
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(1, "s", []byte("k"), []byte("v")); err == nil {
		t.Fatal("put after close succeeded")
	}
	if _, _, err := b.Get(1, "s", []byte("k")); err == nil {
		t.Fatal("get after close succeeded")
	}
}

func TestKeyLayoutKeepsKeyGroupsContiguous(t *testing.T) {
	a := AppendKey(nil, 1, "zzzz", []byte("\xff\xff"))
	b := AppendKey(nil, 2, "", nil)
	if bytes.Compare(a, b) >= 0 {
		t.Fatal("a key of key group 1 sorts after key group 2")
	}
	kg, s, k, err := SplitKey(a)
	if err != nil || kg != 1 || s != "zzzz" || string(k) != "\xff\xff" {
		t.Fatalf("SplitKey = %d %q %q %v", kg, s, k, err)
	}
}

func TestParseType(t *testing.T) {
	for _, c := range []struct {
		raw   string
		want  Type
		alias bool
		bad   bool
	}{{"", Hashmap, false, false}, {"hashmap", Hashmap, false, false}, {"Pebble", Pebble, false, false},
		{"rocksdb", Pebble, true, false}, {"leveldb", "", false, true}} {
		got, alias, err := ParseType(c.raw)
		if (err != nil) != c.bad || got != c.want || alias != c.alias {
			t.Errorf("ParseType(%q) = %q %v %v", c.raw, got, alias, err)
		}
	}
}

func FuzzSplitKey(f *testing.F) {
	f.Add(AppendKey(nil, 7, "value", []byte("k")))
	f.Add([]byte{0, 1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		kg, s, k, err := SplitKey(b)
		if err != nil {
			return
		}
		if !bytes.Equal(AppendKey(nil, kg, s, k), b) {
			t.Fatalf("SplitKey(%x) does not round-trip", b)
		}
	})
}
