package state

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// A source whose bottom level holds tables a merge cannot link as they are (tables moved
// down with their writes' sequence numbers, a view of a table cut by an excise) is
// prepared ahead (LinkableTables.Prepare, what a standby copy does): the merge then links
// the prepared copies and writes only the newer tables' keys, and restores exactly what
// copying every entry gives. A second Prepare of the same files writes nothing; Prune
// deletes the prepared tables of sources no longer kept.
func TestRestoreMergeLinksPreparedTables(t *testing.T) {
	root := t.TempDir()
	a, b := openNoCompactions(t, root, "a"), openNoCompactions(t, root, "b")
	fillGroups(t, a, []int{0, 1, 2, 3, 4, 5, 6, 7}, 300, "a")
	// One flush per key group: tables that overlap nothing, which the compaction moves
	// to the bottom level as they are, sequence numbers and all.
	fillGroups(t, b, []int{8, 9, 10, 11, 12, 13, 14, 15}, 300, "b")
	if err := b.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	// Cut half of key group 12 out: what is left of its table is a view of the file.
	if err := b.db.Excise(context.Background(), pebble.KeyRange{Start: AppendKey(nil, 12, "", nil), End: AppendKey(nil, 12, "op/s", []byte("k00150"))}); err != nil {
		t.Fatal(err)
	}
	// Newer tables above: a changed value, a deleted key, a new key.
	addNewerEntries(t, b)
	ca, cb, fa, fb := checkpointBoth(t, root, a, b)
	bottom, _ := b.db.SSTables()
	var moved, views int
	for _, tb := range bottom[len(bottom)-1] {
		if tb.Virtual {
			views++
		} else if tb.LargestSeqNum != tb.SmallestSeqNum {
			moved++
		}
	}
	if moved == 0 || views == 0 {
		t.Fatalf("the source's bottom level has %d moved tables and %d views, want both (the test's setup no longer makes them)", moved, views)
	}
	const from, to = 4, 11
	handles := func(rs RestoreSource, tag string) RestoreSource {
		rs.Handles = map[string]string{}
		for name := range rs.Files {
			rs.Handles[name] = "job/shared/" + tag + "-" + name
		}
		return rs
	}
	lt, err := OpenLinkableTables(filepath.Join(root, "linkable"))
	if err != nil {
		t.Fatal(err)
	}
	full, _ := source(cb, fb, 8, 15) // the standby copy holds every file of b
	full = handles(full, "b")
	st, err := lt.Prepare(context.Background(), PebbleOptions{Dir: root}, "b", full, 8, 15)
	if err != nil {
		t.Fatal(err)
	}
	if st.Tables < moved+views || st.Written != st.Tables {
		t.Fatalf("prepared %+v, want at least %d tables, all written", st, moved+views)
	}
	again, err := lt.Prepare(context.Background(), PebbleOptions{Dir: root}, "b", full, 8, 15)
	if err != nil || again.Written != 0 || again.Tables != st.Tables {
		t.Fatalf("second prepare of the same files: %+v, %v; want nothing written, %d tables", again, err, st.Tables)
	}
	for _, how := range []string{"prepared", "copied"} {
		t.Run(how, func(t *testing.T) {
			var logs bytes.Buffer
			opts := PebbleOptions{Dir: root, Name: "r-" + how, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			base, _ := source(ca, fa, from, to)
			other, _ := source(cb, fb, from, to)
			other = handles(other, "b")
			if how == "prepared" {
				opts.Linkable = lt
			} else {
				linkMerges = false
				defer func() { linkMerges = true }()
			}
			be, err := OpenPebbleFromCheckpoints(context.Background(), opts, from, to, base, []RestoreSource{other})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			if how == "prepared" {
				m := regexp.MustCompile(`prepared_bytes=(\d+)`).FindStringSubmatch(logs.String())
				if m == nil {
					t.Fatalf("the merge did not link; log:\n%s", logs.String())
				}
				if n, _ := strconv.Atoi(m[1]); n == 0 {
					t.Fatalf("the merge linked no prepared table; log:\n%s", logs.String())
				}
				// The newer tables (a deletion among them) were prepared too: nothing
				// is rewritten during the restore.
				if !strings.Contains(logs.String(), "overlay_bytes=0") {
					t.Fatalf("the merge rewrote entries; log:\n%s", logs.String())
				}
			} else if strings.Contains(logs.String(), "linked the source's tables") {
				t.Fatalf("linked with linking off; log:\n%s", logs.String())
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
				default:
					var i int
					fmt.Sscanf(k, "k%05d", &i)
					tag := "a"
					if kg >= 8 {
						tag = "b"
					}
					want = fmt.Sprintf("%s-%d-%d", tag, kg, i)
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
					want = 300 // kg 9: one deleted, one added
				}
				if kg == 12 && kg >= from && kg <= to {
					want = 150
				}
				if got[kg] != want {
					t.Fatalf("key group %d: %d entries, want %d (all: %v)", kg, got[kg], want, got)
				}
			}
			if err := be.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
				t.Fatal(err)
			}
			if _, err := be.Checkpoint(filepath.Join(t.TempDir(), "again")); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A restore of the cut key groups (12-15) links the prepared view too.
	t.Run("view", func(t *testing.T) {
		var logs bytes.Buffer
		opts := PebbleOptions{Dir: root, Name: "r-view", Logger: slog.New(slog.NewTextHandler(&logs, nil)), Linkable: lt}
		base, _ := source(ca, fa, 7, 15)
		other, _ := source(cb, fb, 7, 15)
		be, err := OpenPebbleFromCheckpoints(context.Background(), opts, 7, 15, base, []RestoreSource{handles(other, "b")})
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		if !strings.Contains(logs.String(), "prepared_bytes=") {
			t.Fatalf("the merge did not link; log:\n%s", logs.String())
		}
		n := 0
		if err := be.IterateRange(12, 12, func(int, string, []byte, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != 150 {
			t.Fatalf("key group 12 (half excised at the source): %d entries, want 150", n)
		}
	})
	if n := lt.Prune(func(tag, handle string, size int64) bool { return tag == "b" }); n != 0 {
		t.Fatalf("Prune keeping every source deleted %d prepared tables", n)
	}
	if n := lt.Prune(func(string, string, int64) bool { return false }); n != st.Tables {
		t.Fatalf("Prune of every source deleted %d prepared tables, want %d", n, st.Tables)
	}
	left, err := os.ReadDir(lt.Dir())
	if err != nil || len(left) != 0 {
		t.Fatalf("after Prune: %d files left (%v), want none", len(left), err)
	}
}

// Level-0 tables are ingested oldest first in runs of tables that do not overlap: of
// two overlapping tables the newer lands in a later run.
func TestLevelZeroRuns(t *testing.T) {
	table := func(lo, hi string) pebble.SSTableInfo {
		var ti pebble.SSTableInfo
		ti.Smallest.UserKey, ti.Largest.UserKey = []byte(lo), []byte(hi)
		return ti
	}
	for _, tc := range []struct {
		name   string
		tables []pebble.SSTableInfo
		want   string
	}{
		{"none", nil, "[]"},
		{"disjoint", []pebble.SSTableInfo{table("a", "c"), table("d", "f"), table("x", "z")}, "[[0 1 2]]"},
		{"overlap starts a run", []pebble.SSTableInfo{table("a", "c"), table("d", "f"), table("b", "e"), table("x", "z")}, "[[0 1] [2 3]]"},
		{"touching bounds overlap", []pebble.SSTableInfo{table("a", "c"), table("c", "d")}, "[[0] [1]]"},
		{"each overlaps the last", []pebble.SSTableInfo{table("a", "z"), table("a", "z"), table("m", "n")}, "[[0] [1] [2]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := make([]string, len(tc.tables))
			for i := range paths {
				paths[i] = strconv.Itoa(i)
			}
			if got := fmt.Sprint(levelZeroRuns(tc.tables, paths)); got != tc.want {
				t.Fatalf("runs %s, want %s", got, tc.want)
			}
		})
	}
}
