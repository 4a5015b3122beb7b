package conf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits maps Flink's duration unit labels (TimeUtils) to their length. Labels are matched
// case-insensitively; a number without a unit is milliseconds.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"µs": time.Microsecond, "us": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// durationFormatUnits is the order in which FormatDuration picks the largest exact unit.
var durationFormatUnits = []struct {
	label string
	size  time.Duration
}{
	{"d", 24 * time.Hour}, {"h", time.Hour}, {"min", time.Minute}, {"s", time.Second},
	{"ms", time.Millisecond}, {"µs", time.Microsecond}, {"ns", time.Nanosecond},
}

// ParseDuration parses a duration the way Flink writes them: an integer followed by an optional
// unit, with or without a space ("10 s", "10s", "5 min", "500 ms", "1 h", "2d"). A plain number is
// milliseconds. A leading minus sign is accepted; options that do not allow negative durations
// reject it.
func ParseDuration(s string) (time.Duration, error) {
	d, problem := parseDuration(s)
	if problem != "" {
		return 0, fmt.Errorf("%q %s", s, problem)
	}
	return d, nil
}

// parseDuration returns the duration or a problem phrase such as `is not a duration`.
func parseDuration(s string) (time.Duration, string) {
	text := strings.TrimSpace(s)
	negative := false
	if strings.HasPrefix(text, "-") {
		negative = true
		text = text[1:]
	}
	digits := leadingDigits(text)
	if digits == "" {
		return 0, "is not a duration (it must start with a whole number)"
	}
	label := strings.ToLower(strings.TrimSpace(text[len(digits):]))
	unit := time.Millisecond
	if label != "" {
		u, ok := durationUnits[label]
		if !ok {
			return 0, fmt.Sprintf("is not a duration (unknown unit %q)", label)
		}
		unit = u
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > uint64(math.MaxInt64/int64(unit)) {
		return 0, "is out of range for a duration"
	}
	d := time.Duration(n) * unit
	if negative {
		d = -d
	}
	return d, ""
}

// leadingDigits returns the ASCII digits at the start of s.
func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// FormatDuration writes d in Flink's style with the largest unit that represents it exactly
// ("30 s", "5 min", "-1 ms"); ParseDuration reads the result back to the same value.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0 ms"
	}
	for _, u := range durationFormatUnits {
		if d%u.size == 0 {
			return strconv.FormatInt(int64(d/u.size), 10) + " " + u.label
		}
	}
	return strconv.FormatInt(int64(d), 10) + " ns"
}
