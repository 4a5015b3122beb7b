package checkpoint

import (
	"fmt"
	"strings"
)

// Type is what kind of snapshot a checkpoint is, as Flink's REST API spells its
// checkpoint_type.
//
// A savepoint shares the checkpoint id counter and the statistics' history (where it shows
// as SAVEPOINT and as latest.savepoint, not latest.completed), but it is not one of the
// job's checkpoints: it is never retained under state.checkpoints.num-retained, never the
// restore point of a failover, and does not move the minimum pause (Flink's savepoints
// since 1.15, FLIP-193: the user owns them).
type Type string

const (
	TypeCheckpoint Type = "CHECKPOINT"
	TypeSavepoint  Type = "SAVEPOINT"
)

// FormatType is the format a savepoint is written in (Flink's SavepointFormatType).
type FormatType string

const (
	// FormatCanonical is the backend-independent format: every subtask's keyed state in
	// full in its state file, which any state backend restores. The default.
	FormatCanonical FormatType = "CANONICAL"
	// FormatNative is the state backend's own format (with incremental checkpoints, pebble
	// database files): a copy of a checkpoint, restorable by the same backend only.
	FormatNative FormatType = "NATIVE"
)

// ParseFormatType reads a savepoint format type, case-insensitively; empty is CANONICAL.
func ParseFormatType(s string) (FormatType, error) {
	switch f := FormatType(strings.ToUpper(strings.TrimSpace(s))); f {
	case "":
		return FormatCanonical, nil
	case FormatCanonical, FormatNative:
		return f, nil
	}
	return "", fmt.Errorf("formatType %q: expected %s or %s", s, FormatCanonical, FormatNative)
}

// Options say what a triggered checkpoint is: a checkpoint (the zero value) or a
// savepoint in a format.
type Options struct {
	Type   Type
	Format FormatType
}

// IsSavepoint reports whether the options describe a savepoint.
func (o Options) IsSavepoint() bool { return o.Type == TypeSavepoint }

// typeOrDefault is o's type, CHECKPOINT when unset.
func (o Options) typeOrDefault() Type {
	if o.Type == "" {
		return TypeCheckpoint
	}
	return o.Type
}
