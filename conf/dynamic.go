package conf

import (
	"fmt"
	"strings"
)

// ParseDynamic reads dynamic properties, Flink's -D overrides. Each property is "-Dkey=value",
// "-D" followed by "key=value" as the next argument, or a bare "key=value". The value may be empty
// and may itself contain '='. Errors (*ParseError with File "-D") name the argument.
func ParseDynamic(args []string) ([]Entry, error) {
	entries := make([]Entry, 0, len(args))
	for i := 0; i < len(args); i++ {
		arg := args[i]
		pos := i + 1
		var kv string
		switch {
		case arg == "-D":
			if i+1 >= len(args) {
				return nil, &ParseError{File: "-D", Msg: fmt.Sprintf("argument %d: -D is not followed by key=value", pos)}
			}
			i++
			kv = args[i]
		case strings.HasPrefix(arg, "-D"):
			kv = arg[2:]
		default:
			kv = arg
		}
		key, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, &ParseError{File: "-D", Msg: fmt.Sprintf("argument %d: %q has no '=' (expected -Dkey=value)", pos, clip(kv))}
		}
		key = strings.TrimSpace(key)
		if key == "" {
			return nil, &ParseError{File: "-D", Msg: fmt.Sprintf("argument %d: %q has an empty key (expected -Dkey=value)", pos, clip(kv))}
		}
		if strings.ContainsAny(key, " \t") {
			return nil, &ParseError{File: "-D", Msg: fmt.Sprintf("argument %d: key %q contains a space", pos, clip(key))}
		}
		entries = append(entries, Entry{
			Key:    key,
			Value:  strings.TrimSpace(value),
			Source: Source{Kind: FromDynamic, Arg: pos, Key: key},
		})
	}
	return entries, nil
}
