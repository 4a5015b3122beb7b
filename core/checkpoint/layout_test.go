package checkpoint

import (
	"slices"
	"testing"
)

func TestLayoutNames(t *testing.T) {
	if got := ChkDir("job-1", 42); got != "job-1/chk-42" {
		t.Errorf("ChkDir = %q", got)
	}
	if got := MetadataPath("job-1", 42); got != "job-1/chk-42/_metadata" {
		t.Errorf("MetadataPath = %q", got)
	}
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"chk-1", 1, true}, {"chk-123", 123, true}, {"chk-0", 0, false}, {"chk-007", 0, false},
		{"chk-", 0, false}, {"chk--1", 0, false}, {"chk-+1", 0, false}, {"chk-1a", 0, false},
		{"shared", 0, false}, {"chk-99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseChkName(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseChkName(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok && ChkName(got) != tt.in {
			t.Errorf("ChkName(%d) = %q, want %q", got, ChkName(got), tt.in)
		}
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name    string
		entries []DirEntry
		want    Selection
	}{
		{"empty", nil, Selection{}},
		{
			name: "newest complete wins, newer incomplete is reported",
			entries: []DirEntry{
				{Name: "chk-3", IsDir: true, Files: []string{"a", "_metadata"}},
				{Name: "chk-10", IsDir: true, Files: []string{"_metadata"}},
				{Name: "chk-11", IsDir: true, Files: []string{"a", "b"}},
				{Name: "chk-2", IsDir: true},
				{Name: "shared", IsDir: true},
				{Name: "chk-4", IsDir: false},
			},
			want: Selection{Latest: 10, Complete: []int64{3, 10}, Incomplete: []int64{2, 11}, Highest: 11, Ignored: []string{"chk-4", "shared"}},
		},
		{
			name:    "only incomplete",
			entries: []DirEntry{{Name: "chk-5", IsDir: true, Files: []string{"_metadata.tmp"}}},
			want:    Selection{Incomplete: []int64{5}, Highest: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Select(tt.entries)
			if got.Latest != tt.want.Latest || got.Highest != tt.want.Highest || !slices.Equal(got.Complete, tt.want.Complete) ||
				!slices.Equal(got.Incomplete, tt.want.Incomplete) || !slices.Equal(got.Ignored, tt.want.Ignored) {
				t.Fatalf("Select = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseChkName(f *testing.F) {
	for _, s := range []string{"chk-1", "chk-0", "chk-", "x", "chk-9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ParseChkName(s)
		if ok && (n < 1 || ChkName(n) != s) {
			t.Fatalf("ParseChkName(%q) = %d but ChkName gives %q", s, n, ChkName(n))
		}
	})
}
