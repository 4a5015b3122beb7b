package conf

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// maxFileSize bounds what Parse reads; a flink-conf.yaml is a few kilobytes.
const maxFileSize = 4 << 20

// Entry is one key/value pair as written in a file or a -D argument, before aliases are resolved.
type Entry struct {
	Key    string
	Value  string
	Source Source
}

// Parse reads a flink-conf.yaml. Flat files (every key at the start of a line) are read the way
// Flink's legacy parser reads them, which also accepts lines strict YAML would not
// ("key: a: b"); files with indented or flow ({...}, [...]) values are read as YAML and nested
// keys are joined with dots. Keys with no value are dropped with a warning, as Flink does.
// Errors are *ParseError and name the file and line.
func Parse(r io.Reader, name string) ([]Entry, []Warning, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read configuration file %s: %w", name, err)
	}
	if len(data) > maxFileSize {
		return nil, nil, &ParseError{File: name, Msg: fmt.Sprintf("larger than %d bytes", maxFileSize)}
	}
	return parseBytes(data, name)
}

func parseBytes(data []byte, name string) ([]Entry, []Warning, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		return nil, nil, &ParseError{File: name, Line: line, Msg: "not valid UTF-8 text"}
	}
	text := string(data)
	if isFlat(text) {
		return parseFlat(text, name)
	}
	return parseYAML(data, name)
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// lines splits text into lines without their line terminators ("\n" or "\r\n").
func lines(text string) []string {
	ls := strings.Split(text, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// isFlat reports whether text is in Flink's flat format: no indented content lines, no YAML
// document markers or sequences at the top, and no flow collections or block scalars as values.
func isFlat(text string) bool {
	for _, l := range lines(text) {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "- ") || l == "-" {
			return false
		}
		if _, v, ok := strings.Cut(trimmed, ": "); ok {
			v = strings.TrimSpace(v)
			if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") || v == "|" || v == ">" ||
				strings.HasPrefix(v, "|-") || strings.HasPrefix(v, ">-") || strings.HasPrefix(v, "&") {
				return false
			}
		}
	}
	return true
}

// parseFlat reads Flink's legacy format: one "key: value" per line, split at the first ": ",
// '#' comments (at the start of a line or after whitespace), optional quotes around the value.
func parseFlat(text, name string) ([]Entry, []Warning, error) {
	var entries []Entry
	var warnings []Warning
	for i, l := range lines(text) {
		lineNo := i + 1
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, rest, ok := strings.Cut(trimmed, ": ")
		if !ok {
			if k, found := strings.CutSuffix(trimmed, ":"); found && !strings.Contains(k, ": ") {
				key, rest, ok = k, "", true
			}
		}
		if !ok {
			return nil, nil, &ParseError{File: name, Line: lineNo,
				Msg: fmt.Sprintf("%q is not a \"key: value\" line (a space must follow the colon)", clip(trimmed))}
		}
		key = strings.TrimSpace(key)
		if key == "" {
			return nil, nil, &ParseError{File: name, Line: lineNo, Msg: "empty key before \":\""}
		}
		if strings.ContainsAny(key, " \t#") {
			return nil, nil, &ParseError{File: name, Line: lineNo, Msg: fmt.Sprintf("key %q contains a space or '#'", clip(key))}
		}
		value, err := flatValue(rest)
		if err != "" {
			return nil, nil, &ParseError{File: name, Line: lineNo, Msg: fmt.Sprintf("value of %s: %s", key, err)}
		}
		src := Source{Kind: FromFile, File: name, Line: lineNo, Key: key}
		if value == "" {
			warnings = append(warnings, Warning{Kind: EmptyValue, Key: key, Source: src})
			continue
		}
		entries = append(entries, Entry{Key: key, Value: value, Source: src})
	}
	return entries, warnings, nil
}

// flatValue strips a trailing comment and surrounding quotes from a flat value. Inside double
// quotes \" and \\ are escapes; inside single quotes ” is a quote, as in YAML.
func flatValue(raw string) (string, string) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return "", ""
	}
	switch v[0] {
	case '"', '\'':
		q := v[0]
		var b strings.Builder
		i := 1
		for ; i < len(v); i++ {
			c := v[i]
			if q == '"' && c == '\\' && i+1 < len(v) && (v[i+1] == '"' || v[i+1] == '\\') {
				b.WriteByte(v[i+1])
				i++
				continue
			}
			if c == q {
				if q == '\'' && i+1 < len(v) && v[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			b.WriteByte(c)
		}
		if i >= len(v) {
			return "", "unterminated quoted value"
		}
		tail := strings.TrimSpace(v[i+1:])
		if tail != "" && !strings.HasPrefix(tail, "#") {
			return "", fmt.Sprintf("unexpected text %q after the closing quote", clip(tail))
		}
		return b.String(), ""
	}
	if i := commentStart(v); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, ""
}

// commentStart returns the index of a '#' that starts a comment (preceded by whitespace), or -1.
func commentStart(v string) int {
	for i := 1; i < len(v); i++ {
		if v[i] == '#' && (v[i-1] == ' ' || v[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// clip shortens s for error messages.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
