package conf

import "fmt"

// ParseError is a configuration file (or -D argument) that cannot be read as key/value pairs.
type ParseError struct {
	File string // file name as given to Parse, or "-D" for dynamic properties
	Line int    // 1-based; 0 when the position is unknown
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ValueError is a value that does not fit its option. Error() reads
//
//	conf/flink-conf.yaml:7: jobmanager.adaptive-scheduler.min-parallelism-increase: "zero" is not an integer (expected an integer ≥ 1)
type ValueError struct {
	Key      string // current key name
	Value    string // the value as written
	Problem  string // "is not an integer", "is out of range", ...
	Expected string // "an integer ≥ 1"
	Source   Source
}

func (e *ValueError) Error() string {
	msg := fmt.Sprintf("%s: %q %s (expected %s)", e.Key, e.Value, e.Problem, e.Expected)
	if e.Source.Kind != FromDefault {
		msg = e.Source.String() + ": " + msg
	}
	if e.Source.Key != "" && e.Source.Key != e.Key {
		msg += fmt.Sprintf(" (set as %s)", e.Source.Key)
	}
	return msg
}

// ConflictError is a combination of values that is invalid although each value is valid alone.
type ConflictError struct {
	Keys []string
	Msg  string
}

func (e *ConflictError) Error() string { return e.Msg }
