package conf

import "fmt"

// SourceKind says which layer a value came from.
type SourceKind uint8

// The layers, lowest precedence first.
const (
	FromDefault SourceKind = iota // declared default in options.go
	FromFile                      // flink-conf.yaml (or config.yaml)
	FromDynamic                   // -Dkey=value
	FromProgram                   // Config.With
)

// Source is where a value came from: the default, a file and line, or a -D argument.
type Source struct {
	Kind SourceKind
	File string // FromFile: the file as named to Parse
	Line int    // FromFile: 1-based line
	Arg  int    // FromDynamic: 1-based position in the argument list
	Key  string // the key as spelled there (may be a deprecated alias)
}

// String renders the source for messages: "default", "conf/flink-conf.yaml:12",
// "-D argument 2", "override".
func (s Source) String() string {
	switch s.Kind {
	case FromFile:
		if s.Line > 0 {
			return fmt.Sprintf("%s:%d", s.File, s.Line)
		}
		return s.File
	case FromDynamic:
		return fmt.Sprintf("-D argument %d", s.Arg)
	case FromProgram:
		return "override"
	default:
		return "default"
	}
}
