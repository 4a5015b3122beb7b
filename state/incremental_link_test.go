package state

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// A merge whose source keeps most of its entries at the bottom level (compacted) links
// those tables instead of copying their entries, and writes only the keys of the newer
// tables over them: the restored instance holds exactly what copying would give, with
// the newer values, without the deleted keys, and without the source's key groups
// outside the range.
func TestRestoreMergeLinksBottomTables(t *testing.T) {
	root := t.TempDir()
	a, b := openNoCompactions(t, root, "a"), openNoCompactions(t, root, "b")
	fillGroups(t, a, []int{0, 1, 2, 3, 4, 5, 6, 7}, 300, "a")
	// b's tables overlap (every flush holds keys of every key group), so the compaction
	// rewrites them into the bottom level, zeroing their sequence numbers.
	for round := range 2 {
		for kg := 8; kg < 16; kg++ {
			for i := round; i < 300; i += 2 {
				if err := b.Put(kg, "op/s", []byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("b-%d-%d", kg, i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := b.Checkpoint(filepath.Join(t.TempDir(), "flush")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	// Newer tables above the compacted ones: a changed value, a deleted key, a new key.
	addNewerEntries(t, b)
	ca, cb, fa, fb := checkpointBoth(t, root, a, b)
	for _, how := range []string{"linked", "copied"} {
		t.Run(how, func(t *testing.T) {
			var logs bytes.Buffer
			opts := PebbleOptions{Dir: root, Name: "r-" + how, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			const from, to = 4, 11
			base, _ := source(ca, fa, from, to)
			other, _ := source(cb, fb, from, to)
			linkMerges = how == "linked"
			defer func() { linkMerges = true }()
			be, err := OpenPebbleFromCheckpoints(context.Background(), opts, from, to, base, []RestoreSource{other})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			if linked := strings.Contains(logs.String(), "linked the source's tables"); linked != (how == "linked") {
				t.Fatalf("linked %v, want %v; log:\n%s", linked, how == "linked", logs.String())
			}
			got := map[int]int{}
			err = be.IterateRange(0, MaxKeyGroups-1, func(kg int, st string, key, value []byte) error {
				got[kg]++
				k := string(key)
				want := ""
				switch {
				case kg == 9 && k == "k00001":
					want = "new"
				case kg == 9 && k == "k00002":
					return fmt.Errorf("key group 9: the deleted key came back")
				case kg == 9 && k == "z-added":
					want = "added"
				case kg >= 8:
					var i int
					fmt.Sscanf(k, "k%05d", &i)
					want = fmt.Sprintf("b-%d-%d", kg, i)
				default:
					var i int
					fmt.Sscanf(k, "k%05d", &i)
					want = fmt.Sprintf("a-%d-%d", kg, i)
				}
				if string(value) != want {
					return fmt.Errorf("key group %d %s = %q, want %q", kg, k, value, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for kg := range 16 {
				want := 0
				if kg >= from && kg <= to {
					want = 300
				}
				if kg == 9 {
					want = 300 // one deleted, one added
				}
				if got[kg] != want {
					t.Fatalf("key group %d: %d entries, want %d (all: %v)", kg, got[kg], want, got)
				}
			}
			// The restored instance takes writes, compacts and checkpoints again.
			if err := be.Put(10, "op/s", []byte("x"), []byte("y")); err != nil {
				t.Fatal(err)
			}
			if err := be.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
				t.Fatal(err)
			}
			if _, err := be.Checkpoint(filepath.Join(t.TempDir(), "again")); err != nil {
				t.Fatal(err)
			}
			if v, ok, err := be.Get(13, "op/s", []byte("k00001")); err != nil || ok {
				t.Fatalf("key group 13 (outside the range) after compaction: %q %v %v", v, ok, err)
			}
		})
	}
}
