package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWritebackStartsEveryMiB: the writeback of a local file is started once per full
// writebackBytes written, from where the last one ended, whatever the sizes of the writes.
func TestWritebackStartsEveryMiB(t *testing.T) {
	for _, tc := range []struct {
		name        string
		writes      []int
		wantStarted int64
	}{
		{"nothing", nil, 0},
		{"below one MiB", []int{writebackBytes - 1}, 0},
		{"exactly one MiB", []int{writebackBytes}, writebackBytes},
		{"small writes past one MiB", []int{700 << 10, 700 << 10}, 1400 << 10},
		{"past one MiB, then less than one more", []int{writebackBytes + 5, writebackBytes - 10}, writebackBytes + 5},
		{"one large write", []int{3*writebackBytes + 1}, 3*writebackBytes + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "f"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var wb writeback
			total := int64(0)
			for _, n := range tc.writes {
				if _, err := f.Write(make([]byte, n)); err != nil {
					t.Fatal(err)
				}
				wb.wrote(f, n)
				total += int64(n)
			}
			if wb.off != total || wb.started != tc.wantStarted {
				t.Errorf("after writes %v: off %d, started %d; want %d, %d", tc.writes, wb.off, wb.started, total, tc.wantStarted)
			}
		})
	}
}
