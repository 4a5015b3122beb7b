package conf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// valueType reads and writes one kind of option value. parse returns a problem phrase
// ("is not an integer") instead of an error so that ValueError can name key, value and
// expectation in one sentence.
type valueType[T any] interface {
	parse(raw string) (T, string)
	format(v T) string
	expected() string
}

// intType is a whole number in [min, max].
type intType struct{ min, max int }

func (t intType) parse(raw string) (int, string) {
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, "is out of range"
		}
		return 0, "is not an integer"
	}
	if n < int64(t.min) || n > int64(t.max) {
		return 0, "is out of range"
	}
	return int(n), ""
}

func (intType) format(v int) string { return strconv.Itoa(v) }

func (t intType) expected() string {
	switch {
	case t.max == math.MaxInt32 || t.max == math.MaxInt:
		return fmt.Sprintf("an integer ≥ %d", t.min)
	default:
		return fmt.Sprintf("an integer between %d and %d", t.min, t.max)
	}
}

// floatType is a decimal number in [min, max].
type floatType struct{ min, max float64 }

func (t floatType) parse(raw string) (float64, string) {
	f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "is not a number"
	}
	if f < t.min || f > t.max {
		return 0, "is out of range"
	}
	return f, ""
}

func (floatType) format(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func (t floatType) expected() string {
	if math.IsInf(t.max, 1) {
		return fmt.Sprintf("a number ≥ %g", t.min)
	}
	return fmt.Sprintf("a number between %g and %g", t.min, t.max)
}

// boolType is true or false, case-insensitive, as Flink accepts them.
type boolType struct{}

func (boolType) parse(raw string) (bool, string) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, "is not a boolean"
}

func (boolType) format(v bool) string { return strconv.FormatBool(v) }
func (boolType) expected() string     { return "true or false" }

// stringType is any text; check, when set, rejects malformed values with a problem phrase.
type stringType struct {
	check func(string) string
	want  string
}

func (t stringType) parse(raw string) (string, string) {
	if t.check != nil {
		if p := t.check(raw); p != "" {
			return "", p
		}
	}
	return raw, ""
}

func (stringType) format(v string) string { return v }

func (t stringType) expected() string {
	if t.want != "" {
		return t.want
	}
	return "a string"
}

// durationType is a Flink duration; negative values only where the option allows them (for
// example -1 meaning "wait forever"), and never below min otherwise.
type durationType struct {
	allowNegative bool
	// minusOne allows one negative value, -1 (ms), meaning "off" (execution.buffer-timeout).
	minusOne bool
	min      time.Duration
}

func (t durationType) parse(raw string) (time.Duration, string) {
	d, problem := parseDuration(raw)
	if problem != "" {
		return 0, problem
	}
	if d < 0 && t.minusOne && d != -time.Millisecond {
		return 0, "is negative other than -1"
	}
	if d < 0 && !t.allowNegative && !t.minusOne {
		return 0, "is negative"
	}
	if d >= 0 && d < t.min {
		return 0, "is too short"
	}
	return d, ""
}

func (durationType) format(v time.Duration) string { return FormatDuration(v) }

func (t durationType) expected() string {
	const forms = "such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds"
	switch {
	case t.minusOne:
		return "0, -1 or a positive duration (" + forms + ")"
	case t.allowNegative:
		return "a duration (" + forms + "; negative means no limit)"
	case t.min > 0:
		return "a duration of at least " + FormatDuration(t.min) + " (" + forms + ")"
	default:
		return "a non-negative duration (" + forms + ")"
	}
}

// memoryType is a Flink memory size.
type memoryType struct{}

func (memoryType) parse(raw string) (MemorySize, string) { return parseMemorySize(raw) }
func (memoryType) format(v MemorySize) string            { return v.String() }
func (memoryType) expected() string {
	return "a memory size such as 512 mb, 1 gb, 1728m or 2g (a plain number is bytes)"
}

// enumType accepts one of a fixed set of names, case-insensitively, plus aliases; it returns the
// canonical spelling.
type enumType struct {
	values  []string
	aliases map[string]string
}

func (t enumType) parse(raw string) (string, string) {
	want := strings.ToLower(strings.TrimSpace(raw))
	for _, v := range t.values {
		if strings.ToLower(v) == want {
			return v, ""
		}
	}
	if v, ok := t.aliases[want]; ok {
		return v, ""
	}
	return "", "is not a valid choice"
}

func (enumType) format(v string) string { return v }
func (t enumType) expected() string     { return "one of " + strings.Join(t.values, ", ") }

// listType is a ';'-separated list (Flink's list syntax); a YAML sequence arrives joined with ';'.
// Empty items are dropped.
type listType struct{}

func (listType) parse(raw string) ([]string, string) {
	var out []string
	for _, item := range strings.Split(raw, ";") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out, ""
}

func (listType) format(v []string) string { return strings.Join(v, ";") }
func (listType) expected() string         { return "a list of values separated by ';'" }
