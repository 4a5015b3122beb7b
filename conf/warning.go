package conf

import (
	"fmt"
	"log/slog"
)

// WarningKind classifies a Warning.
type WarningKind uint8

// Kinds of warnings. None of them stops a configuration from loading.
const (
	UnknownKey    WarningKind = iota // a key no option declares
	DeprecatedKey                    // an old name of an option was used
	ShadowedKey                      // an alias was ignored because the new key is set in the same layer
	DuplicateKey                     // the same key twice in one layer; the later wins
	EmptyValue                       // "key:" with no value; ignored, as Flink does
)

// Warning is something odd in the configuration that tide tolerates.
type Warning struct {
	Kind WarningKind
	// Key is the key as written.
	Key string
	// Related is the key the warning points to: the suggested key for UnknownKey (may be ""),
	// the new name for DeprecatedKey and ShadowedKey.
	Related string
	Source  Source
}

// String renders the warning as one sentence that starts with its source.
func (w Warning) String() string {
	var msg string
	switch w.Kind {
	case UnknownKey:
		msg = fmt.Sprintf("unknown configuration key %s", w.Key)
		if w.Related != "" {
			msg += fmt.Sprintf("; did you mean %s?", w.Related)
		}
	case DeprecatedKey:
		msg = fmt.Sprintf("configuration key %s is deprecated; use %s", w.Key, w.Related)
	case ShadowedKey:
		msg = fmt.Sprintf("configuration key %s is ignored because %s is also set", w.Key, w.Related)
	case DuplicateKey:
		msg = fmt.Sprintf("configuration key %s is set more than once; the last value wins", w.Key)
	case EmptyValue:
		msg = fmt.Sprintf("configuration key %s has no value and is ignored", w.Key)
	}
	return w.Source.String() + ": " + msg
}

// LogWarnings logs each warning at warn level with key/value attributes (key, related key,
// source).
func LogWarnings(logger *slog.Logger, warnings []Warning) {
	if logger == nil {
		return
	}
	for _, w := range warnings {
		attrs := []any{"key", w.Key, "source", w.Source.String()}
		switch w.Kind {
		case UnknownKey:
			if w.Related != "" {
				attrs = append(attrs, "suggestion", w.Related)
			}
			logger.Warn("unknown configuration key", attrs...)
		case DeprecatedKey:
			logger.Warn("deprecated configuration key; use the new key", append(attrs, "new_key", w.Related)...)
		case ShadowedKey:
			logger.Warn("deprecated configuration key ignored; the new key is also set", append(attrs, "new_key", w.Related)...)
		case DuplicateKey:
			logger.Warn("configuration key set more than once; the last value wins", attrs...)
		case EmptyValue:
			logger.Warn("configuration key without a value ignored", attrs...)
		}
	}
}
