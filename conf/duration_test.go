package conf

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"10 s", 10 * time.Second},
		{"10s", 10 * time.Second},
		{"10 S", 10 * time.Second},
		{"  10   seconds ", 10 * time.Second},
		{"5 min", 5 * time.Minute},
		{"5min", 5 * time.Minute},
		{"5 m", 5 * time.Minute},
		{"2 minutes", 2 * time.Minute},
		{"500 ms", 500 * time.Millisecond},
		{"500", 500 * time.Millisecond},
		{"0", 0},
		{"1 h", time.Hour},
		{"3 hours", 3 * time.Hour},
		{"2d", 48 * time.Hour},
		{"1 day", 24 * time.Hour},
		{"7 µs", 7 * time.Microsecond},
		{"7us", 7 * time.Microsecond},
		{"9 ns", 9},
		{"4 millis", 4 * time.Millisecond},
		{"-1", -time.Millisecond},
		{"-1 s", -time.Second},
		{"9223372036854775807 ns", time.Duration(1<<63 - 1)},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDurationErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `"" is not a duration (it must start with a whole number)`},
		{"s", `"s" is not a duration (it must start with a whole number)`},
		{"1.5 s", `"1.5 s" is not a duration (unknown unit ".5 s")`},
		{"10 sx", `"10 sx" is not a duration (unknown unit "sx")`},
		{"10 s 5", `"10 s 5" is not a duration (unknown unit "s 5")`},
		{"+5 s", `"+5 s" is not a duration (it must start with a whole number)`},
		{"--1", `"--1" is not a duration (it must start with a whole number)`},
		{"107000 d", `"107000 d" is out of range for a duration`},
		{"99999999999999999999", `"99999999999999999999" is out of range for a duration`},
	}
	for _, tt := range tests {
		_, err := ParseDuration(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseDuration(%q) error = %v; want %s", tt.in, err, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0 ms"},
		{30 * time.Second, "30 s"},
		{5 * time.Minute, "5 min"},
		{90 * time.Second, "90 s"},
		{time.Hour, "1 h"},
		{48 * time.Hour, "2 d"},
		{-time.Millisecond, "-1 ms"},
		{1500 * time.Microsecond, "1500 µs"},
		{7, "7 ns"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%v) = %q; want %q", tt.in, got, tt.want)
		}
		back, err := ParseDuration(tt.want)
		if err != nil || back != tt.in {
			t.Errorf("ParseDuration(FormatDuration(%v)) = %v, %v", tt.in, back, err)
		}
	}
}

func FuzzDuration(f *testing.F) {
	for _, s := range []string{"10 s", "10s", "5 min", "500", "-1", "2d", "1 h", "7 µs", "", "9223372036854775807 ns", "1.5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), `"`) {
				t.Fatalf("error does not quote the value: %v", err)
			}
			return
		}
		back, err := ParseDuration(FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("round trip of %q: %v → %q → %v, %v", s, d, FormatDuration(d), back, err)
		}
	})
}
