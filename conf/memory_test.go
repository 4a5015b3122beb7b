package conf

import (
	"testing"
)

func TestParseMemorySize(t *testing.T) {
	tests := []struct {
		in   string
		want MemorySize
	}{
		{"1 gb", Gibibyte},
		{"1GB", Gibibyte},
		{"2g", 2 * Gibibyte},
		{"512m", 512 * Mebibyte},
		{"1024 mb", Gibibyte},
		{"1728 MB", 1728 * Mebibyte},
		{"64 kb", 64 * Kibibyte},
		{"64k", 64 * Kibibyte},
		{"1 tb", Tebibyte},
		{"3 mebibytes", 3 * Mebibyte},
		{"100", 100},
		{"100 b", 100},
		{"100 bytes", 100},
		{"0", 0},
	}
	for _, tt := range tests {
		got, err := ParseMemorySize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseMemorySize(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseMemorySizeErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `"" is not a memory size (it must start with a whole, non-negative number)`},
		{"-1 mb", `"-1 mb" is not a memory size (it must start with a whole, non-negative number)`},
		{"1.5 gb", `"1.5 gb" is not a memory size (unknown unit ".5 gb")`},
		{"12 gib", `"12 gib" is not a memory size (unknown unit "gib")`},
		{"9000000 tb", `"9000000 tb" is out of range for a memory size`},
	}
	for _, tt := range tests {
		_, err := ParseMemorySize(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseMemorySize(%q) error = %v; want %s", tt.in, err, tt.want)
		}
	}
}

func TestMemorySizeString(t *testing.T) {
	tests := []struct {
		in   MemorySize
		want string
	}{
		{0, "0 bytes"},
		{100, "100 bytes"},
		{1728 * Mebibyte, "1728 mb"},
		{Gibibyte, "1 gb"},
		{1536 * Kibibyte, "1536 kb"},
		{2 * Tebibyte, "2 tb"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%d.String() = %q; want %q", int64(tt.in), got, tt.want)
		}
	}
}

func FuzzMemorySize(f *testing.F) {
	for _, s := range []string{"1 gb", "512m", "1024 mb", "2g", "100", "", "-1", "9000000 tb", "8589934591 gb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMemorySize(s)
		if err != nil {
			return
		}
		if m < 0 {
			t.Fatalf("ParseMemorySize(%q) = %d, negative", s, int64(m))
		}
		back, err := ParseMemorySize(m.String())
		if err != nil || back != m {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, int64(m), m.String(), int64(back), err)
		}
	})
}
