package coretest

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of scripted scenarios in testdata/")

// Arg is one key=value (or key=(a,b,c), or a bare key) argument of a directive.
type Arg struct {
	Key  string
	Vals []string
}

// TestData is one directive of a script: a command line, optional input lines, and the
// expected output after the ---- separator (up to the next blank line).
type TestData struct {
	Comment  string // comment lines right before the directive, kept by -rewrite
	Pos      string // file:line
	Cmd      string
	Args     []Arg
	Input    string
	Expected string
}

// HasArg reports whether the directive has the key.
func (d *TestData) HasArg(key string) bool {
	for _, a := range d.Args {
		if a.Key == key {
			return true
		}
	}
	return false
}

// Arg returns the first value of key, or def.
func (d *TestData) Arg(key, def string) string {
	for _, a := range d.Args {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

// Vals returns every value of key.
func (d *TestData) Vals(key string) []string {
	for _, a := range d.Args {
		if a.Key == key {
			return a.Vals
		}
	}
	return nil
}

// ParseLine splits a directive line into command and arguments.
func ParseLine(line string) (cmd string, args []Arg, err error) {
	fields, err := splitFields(line)
	if err != nil {
		return "", nil, err
	}
	if len(fields) == 0 {
		return "", nil, fmt.Errorf("empty directive")
	}
	cmd = fields[0]
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			args = append(args, Arg{Key: f})
			continue
		}
		if key == "" {
			return "", nil, fmt.Errorf("argument %q: empty key", f)
		}
		if strings.HasPrefix(val, "(") {
			if !strings.HasSuffix(val, ")") {
				return "", nil, fmt.Errorf("argument %q: unclosed (", f)
			}
			val = val[1 : len(val)-1]
			var vals []string
			if val != "" {
				vals = strings.Split(val, ",")
			}
			args = append(args, Arg{Key: key, Vals: vals})
			continue
		}
		args = append(args, Arg{Key: key, Vals: []string{val}})
	}
	return cmd, args, nil
}

// splitFields splits on spaces outside parentheses.
func splitFields(line string) ([]string, error) {
	var out []string
	depth, start := 0, -1
	for i, r := range line {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced ) at column %d", i+1)
			}
		case (r == ' ' || r == '\t') && depth == 0:
			if start >= 0 {
				out = append(out, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced ( in %q", line)
	}
	if start >= 0 {
		out = append(out, line[start:])
	}
	return out, nil
}

// ParseScript parses a whole script.
func ParseScript(name, text string) ([]*TestData, error) {
	var out []*TestData
	lines := strings.Split(text, "\n")
	var comment []string
	seenDirective := false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" {
			comment = nil
			continue
		}
		if strings.HasPrefix(line, "#") {
			if seenDirective {
				comment = append(comment, lines[i])
			}
			continue
		}
		seenDirective = true
		d := &TestData{Pos: fmt.Sprintf("%s:%d", name, i+1), Comment: strings.Join(comment, "\n")}
		comment = nil
		var err error
		if d.Cmd, d.Args, err = ParseLine(line); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Pos, err)
		}
		var input []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "----"; i++ {
			input = append(input, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: directive %q without ---- separator", d.Pos, d.Cmd)
		}
		d.Input = strings.Join(input, "\n")
		var expected []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			expected = append(expected, lines[i])
		}
		if len(expected) > 0 {
			d.Expected = strings.Join(expected, "\n") + "\n"
		}
		out = append(out, d)
	}
	return out, nil
}

// RunTest runs every directive of the script at path through f and compares f's output
// with the expected output; with -rewrite it writes the actual output back instead.
func RunTest(t *testing.T, path string, f func(t *testing.T, d *TestData) string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read scenario: %v", err)
	}
	script, err := ParseScript(path, string(raw))
	if err != nil {
		t.Fatalf("parse scenario: %v", err)
	}
	var rewritten strings.Builder
	for _, d := range script {
		actual := f(t, d)
		if actual != "" && !strings.HasSuffix(actual, "\n") {
			actual += "\n"
		}
		if *rewrite {
			rewritten.WriteString(formatDirective(d, actual))
			continue
		}
		if actual != d.Expected {
			t.Errorf("%s: %s\nexpected:\n%s\nactual:\n%s", d.Pos, d.Cmd, d.Expected, actual)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(preserveHeader(string(raw))+rewritten.String()), 0o644); err != nil {
			t.Fatalf("rewrite %s: %v", path, err)
		}
	}
}

// preserveHeader keeps the comment lines before the first directive.
func preserveHeader(text string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			break
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func formatDirective(d *TestData, actual string) string {
	var b strings.Builder
	if d.Comment != "" {
		b.WriteString(d.Comment + "\n")
	}
	b.WriteString(d.Cmd)
	for _, a := range d.Args {
		b.WriteString(" " + a.Key)
		switch {
		case len(a.Vals) == 1 && !strings.Contains(a.Vals[0], ","):
			b.WriteString("=" + a.Vals[0])
		case len(a.Vals) > 0 || a.Vals != nil:
			b.WriteString("=(" + strings.Join(a.Vals, ",") + ")")
		}
	}
	b.WriteString("\n")
	if d.Input != "" {
		b.WriteString(d.Input + "\n")
	}
	b.WriteString("----\n")
	b.WriteString(actual)
	b.WriteString("\n")
	return b.String()
}
