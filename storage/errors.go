package storage

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; test with errors.Is. Every error returned by this package is an *Error
// whose Kind is one of these (or nil when the cause needs no class) and whose Err is the cause.
var (
	ErrNotFound          = errors.New("not found")
	ErrPermission        = errors.New("permission denied")
	ErrQuotaExceeded     = errors.New("quota exceeded")
	ErrNoSuchNamenode    = errors.New("no such namenode")
	ErrUnavailable       = errors.New("storage unavailable (transient errors persisted)")
	ErrUnsupportedScheme = errors.New("unsupported storage scheme")
	ErrInvalidName       = errors.New("invalid name")
	ErrWriterClosed      = errors.New("writer already committed or aborted")
	ErrClosed            = errors.New("storage closed")
)

// Error reports a failed storage operation.
type Error struct {
	Op       string // create, write, commit, abort, open, read, stat, list, delete, rename, open-storage
	Path     string // full URI of the path the operation was about
	Kind     error  // one of the sentinels above, or nil
	Dir      string // for ErrQuotaExceeded: the directory whose quota was exceeded, when known
	Attempts int    // tries made (more than 1 when transient errors were retried)
	Err      error  // the cause
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "storage: %s %s", e.Op, e.Path)
	if e.Kind != nil {
		b.WriteString(": ")
		b.WriteString(e.Kind.Error())
		if e.Dir != "" {
			fmt.Fprintf(&b, " on directory %s", e.Dir)
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the kind and the cause, so errors.Is and errors.As see both.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
