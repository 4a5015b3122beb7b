package conf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MemorySize is an amount of memory in bytes, written the way Flink writes it ("1 gb", "512m").
type MemorySize int64

// Common sizes.
const (
	Byte     MemorySize = 1
	Kibibyte            = 1024 * Byte
	Mebibyte            = 1024 * Kibibyte
	Gibibyte            = 1024 * Mebibyte
	Tebibyte            = 1024 * Gibibyte
)

// memoryUnits maps Flink's MemorySize unit labels to their size; all are powers of 1024.
var memoryUnits = map[string]MemorySize{
	"b": Byte, "bytes": Byte,
	"k": Kibibyte, "kb": Kibibyte, "kibibytes": Kibibyte,
	"m": Mebibyte, "mb": Mebibyte, "mebibytes": Mebibyte,
	"g": Gibibyte, "gb": Gibibyte, "gibibytes": Gibibyte,
	"t": Tebibyte, "tb": Tebibyte, "tebibytes": Tebibyte,
}

// ParseMemorySize parses "1 gb", "512m", "1024 mb", "2g" or a plain number of bytes. Units are
// case-insensitive and 1024-based, as in Flink.
func ParseMemorySize(s string) (MemorySize, error) {
	m, problem := parseMemorySize(s)
	if problem != "" {
		return 0, fmt.Errorf("%q %s", s, problem)
	}
	return m, nil
}

func parseMemorySize(s string) (MemorySize, string) {
	text := strings.TrimSpace(s)
	digits := leadingDigits(text)
	if digits == "" {
		return 0, "is not a memory size (it must start with a whole, non-negative number)"
	}
	label := strings.ToLower(strings.TrimSpace(text[len(digits):]))
	unit := Byte
	if label != "" {
		u, ok := memoryUnits[label]
		if !ok {
			return 0, fmt.Sprintf("is not a memory size (unknown unit %q)", label)
		}
		unit = u
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > uint64(math.MaxInt64/int64(unit)) {
		return 0, "is out of range for a memory size"
	}
	return MemorySize(n) * unit, ""
}

// Bytes returns the size in bytes.
func (m MemorySize) Bytes() int64 { return int64(m) }

// String writes the size with the largest unit that represents it exactly ("1 gb", "1728 mb",
// "100 bytes"); ParseMemorySize reads it back to the same value.
func (m MemorySize) String() string {
	for _, u := range []struct {
		label string
		size  MemorySize
	}{{"tb", Tebibyte}, {"gb", Gibibyte}, {"mb", Mebibyte}, {"kb", Kibibyte}} {
		if m != 0 && m%u.size == 0 {
			return strconv.FormatInt(int64(m/u.size), 10) + " " + u.label
		}
	}
	return strconv.FormatInt(int64(m), 10) + " bytes"
}
