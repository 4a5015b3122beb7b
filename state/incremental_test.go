package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func fillGroups(t *testing.T, be *PebbleBackend, groups []int, n int, tag string) {
	t.Helper()
	for _, kg := range groups {
		for i := range n {
			if err := be.Put(kg, "op/s", []byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("%s-%d-%d", tag, kg, i))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := be.Checkpoint(filepath.Join(t.TempDir(), "flush")); err != nil { // one table per key group
			t.Fatal(err)
		}
	}
}

// source turns a checkpoint into a restore source, leaving out (as placeholders) the
// tables that hold none of from..to.
func source(dir string, files []DBFile, from, to int) (RestoreSource, int) {
	s := RestoreSource{Files: map[string]string{}, Placeholders: map[string]int64{}}
	skipped := 0
	for _, f := range files {
		if f.Overlaps(from, to) {
			s.Files[f.Name] = filepath.Join(dir, f.Name)
		} else {
			s.Placeholders[f.Name] = f.Size
			skipped++
		}
	}
	return s, skipped
}

// openNoCompactions opens an instance in root/name that compacts only when told to, so a
// test knows which tables its checkpoints hold (here: one per key group). Left to itself,
// Pebble may merge them into one table across all key groups before the checkpoint, which
// a restore of part of the range must then fetch whole.
func openNoCompactions(t *testing.T, root, name string) *PebbleBackend {
	t.Helper()
	be, err := openPebbleIn(filepath.Join(root, name), PebbleOptions{}, func(po *pebble.Options) {
		po.DisableAutomaticCompactions = true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = be.Close() })
	return be
}

func TestRestoreFromCheckpointsClipsAndMerges(t *testing.T) {
	root := t.TempDir()
	a, b := openNoCompactions(t, root, "a"), openNoCompactions(t, root, "b")
	fillGroups(t, a, []int{0, 1, 2, 3, 4, 5, 6, 7}, 300, "a")
	fillGroups(t, b, []int{8, 9, 10, 11}, 300, "b")
	// A later change and a delete must win over the older tables.
	if err := a.Put(5, "op/s", []byte("k00001"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(6, "op/s", []byte("k00002")); err != nil {
		t.Fatal(err)
	}
	ca, cb, fa, fb := checkpointBoth(t, root, a, b)
	// Writes after the checkpoint are not in it.
	if err := a.Put(5, "op/s", []byte("k00001"), []byte("later")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		from, to int
	}{{"same range", 0, 7}, {"part of one", 2, 5}, {"across both", 5, 9}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, skipped := source(ca, fa, c.from, c.to)
			if c.from >= 2 && skipped == 0 {
				t.Fatalf("no table left out for %d..%d: %+v", c.from, c.to, fa)
			}
			var others []RestoreSource
			if c.to >= 8 {
				o, _ := source(cb, fb, c.from, c.to)
				others = append(others, o)
			}
			be, err := OpenPebbleFromCheckpoints(context.Background(), PebbleOptions{Dir: root, Name: "r"}, c.from, c.to, base, others)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			got := map[int]int{}
			err = be.IterateRange(0, MaxKeyGroups-1, func(kg int, st string, key, value []byte) error {
				got[kg]++
				if kg == 5 && string(key) == "k00001" && string(value) != "new" {
					return fmt.Errorf("key group 5 k00001 = %q, want new", value)
				}
				if kg == 6 && string(key) == "k00002" {
					return fmt.Errorf("a deleted key came back")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for kg := range 12 {
				want := 0
				if kg >= c.from && kg <= c.to {
					want = 300
					if kg == 6 {
						want = 299
					}
				}
				if got[kg] != want {
					t.Fatalf("key group %d: %d entries, want %d (all: %v)", kg, got[kg], want, got)
				}
			}
			// The restored instance takes writes and checkpoints again.
			if err := be.Put(c.from, "op/s", []byte("x"), []byte("y")); err != nil {
				t.Fatal(err)
			}
			if _, err := be.Checkpoint(filepath.Join(t.TempDir(), "again")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCheckpointBoundsSurviveCompaction: the key-group bounds of a checkpoint's tables come
// from the checkpoint's own manifest, so a compaction of the live instance that replaces
// those tables right after the checkpoint (Pebble compacts L0 in the background) cannot
// leave them unknown.
func TestCheckpointBoundsSurviveCompaction(t *testing.T) {
	// No automatic compactions: the test compacts when it has the checkpoint.
	be := openNoCompactions(t, t.TempDir(), "db")
	fillGroups(t, be, []int{0, 1, 2, 3, 4, 5}, 200, "c")
	// One more table across all of them: the compaction below must rewrite, not move.
	for kg := range 6 {
		if err := be.Put(kg, "op/s", []byte("k00000"), []byte("again")); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "ck")
	if err := be.applyWrites(); err != nil { // the buffered writes into the memtable
		t.Fatal(err)
	}
	if err := be.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := be.db.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
	// The live instance compacts every table of the checkpoint away.
	if err := be.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	levels, err := be.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range levels {
		for _, tb := range lv {
			live[fmt.Sprintf("%s.sst", tb.BackingSSTNum)] = true
		}
	}
	bounds, _, err := checkpointTableBounds(dir)
	if err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) < 7 {
		t.Fatalf("checkpoint has %d tables, want one per key group and one across: %v", len(tables), tables)
	}
	seen, across := map[int]bool{}, 0
	for _, p := range tables {
		name := filepath.Base(p)
		if live[name] {
			t.Fatalf("table %s still live after the full compaction: the test shows nothing", name)
		}
		b, ok := bounds[name]
		switch {
		case ok && b == [2]int{0, 5}:
			across++
		case ok && b[0] >= 0 && b[1] == b[0]:
			seen[b[0]] = true
		default:
			t.Fatalf("table %s: bounds %v (known %v), want one key group or 0..5", name, b, ok)
		}
	}
	for kg := range 6 {
		if !seen[kg] {
			t.Fatalf("no table bounded to key group %d: %v", kg, bounds)
		}
	}
	if across != 1 {
		t.Fatalf("%d tables bounded to 0..5, want 1: %v", across, bounds)
	}
	if _, err := os.Stat(filepath.Join(dir, "LOCK")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading the bounds left a LOCK file in the checkpoint: %v", err)
	}
}

// TestIngestParts: the merge's parallel parts cover the range exactly once, in order,
// contiguous and at most n of them, for ranges smaller and larger than n.
func TestIngestParts(t *testing.T) {
	for _, tc := range []struct {
		from, to, n int
		want        [][2]int
	}{
		{0, 127, 2, [][2]int{{0, 63}, {64, 127}}},
		{64, 127, 3, [][2]int{{64, 84}, {85, 105}, {106, 127}}},
		{5, 5, 4, [][2]int{{5, 5}}},
		{3, 5, 8, [][2]int{{3, 3}, {4, 4}, {5, 5}}},
		{0, 9, 1, [][2]int{{0, 9}}},
		{0, 9, 0, [][2]int{{0, 9}}},
		{4, 3, 2, nil}, // empty range
	} {
		got := ingestParts(tc.from, tc.to, tc.n)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ingestParts(%d, %d, %d) = %v, want %v", tc.from, tc.to, tc.n, got, tc.want)
		}
	}
}

// checkpointBoth checkpoints a into root/ck-a and b into root/ck-b.
func checkpointBoth(t *testing.T, root string, a, b *PebbleBackend) (ca, cb string, fa, fb []DBFile) {
	t.Helper()
	ca, cb = filepath.Join(root, "ck-a"), filepath.Join(root, "ck-b")
	var err error
	if fa, err = a.Checkpoint(ca); err != nil {
		t.Fatal(err)
	}
	if fb, err = b.Checkpoint(cb); err != nil {
		t.Fatal(err)
	}
	return ca, cb, fa, fb
}

// addNewerEntries changes key groups 9 and 13 of be above its older tables: k00001 gets
// the value "new", k00002 is deleted, z-added is added with the value "added".
func addNewerEntries(t *testing.T, be *PebbleBackend) {
	t.Helper()
	for _, kg := range []int{9, 13} {
		if err := be.Put(kg, "op/s", []byte("k00001"), []byte("new")); err != nil {
			t.Fatal(err)
		}
		if err := be.Delete(kg, "op/s", []byte("k00002")); err != nil {
			t.Fatal(err)
		}
		if err := be.Put(kg, "op/s", []byte("z-added"), []byte("added")); err != nil {
			t.Fatal(err)
		}
	}
}
