package state

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
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

func TestRestoreFromCheckpointsClipsAndMerges(t *testing.T) {
	root := t.TempDir()
	a, err := OpenPebble(PebbleOptions{Dir: root, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenPebble(PebbleOptions{Dir: root, Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fillGroups(t, a, []int{0, 1, 2, 3, 4, 5, 6, 7}, 300, "a")
	fillGroups(t, b, []int{8, 9, 10, 11}, 300, "b")
	// A later change and a delete must win over the older tables.
	if err := a.Put(5, "op/s", []byte("k00001"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(6, "op/s", []byte("k00002")); err != nil {
		t.Fatal(err)
	}
	ca, cb := filepath.Join(root, "ck-a"), filepath.Join(root, "ck-b")
	fa, err := a.Checkpoint(ca)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.Checkpoint(cb)
	if err != nil {
		t.Fatal(err)
	}
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
