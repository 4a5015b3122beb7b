package conf

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// docLine is a documented option in the shipped file: "# key: value" right after a "#" line.
var docLine = regexp.MustCompile(`^# ([A-Za-z0-9$][A-Za-z0-9._-]*): (\S.*)$`)

// TestShippedFileDocumentsEveryOption fails when an option is declared but not documented in
// conf/flink-conf.yaml, documented but not declared, or documented with a value other than its
// default.
func TestShippedFileDocumentsEveryOption(t *testing.T) {
	f, err := os.Open(FileName)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	documented := map[string]string{}
	prev := ""
	lineNo := 0
	var block []string // comment lines since the last blank line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if line == "" {
			block = nil
		} else {
			block = append(block, line)
		}
		if m := docLine.FindStringSubmatch(line); m != nil && prev == "#" {
			key, value := m[1], m[2]
			spec, ok := Lookup(key)
			switch {
			case !ok:
				t.Errorf("%s:%d documents %s, which no option declares", FileName, lineNo, key)
			case spec.Key != key:
				t.Errorf("%s:%d documents the old name %s; document %s", FileName, lineNo, key, spec.Key)
			case documented[key] != "":
				t.Errorf("%s:%d documents %s twice", FileName, lineNo, key)
			default:
				documented[key] = value
				text := strings.Join(block, "\n")
				if live := strings.Contains(text, "Reloaded live."); live != spec.Reloadable ||
					strings.Contains(text, "Needs a restart.") == spec.Reloadable {
					t.Errorf("%s:%d: %s is documented with the wrong reload behaviour (reloadable: %v)", FileName, lineNo, key, spec.Reloadable)
				}
				v, problem := spec.parse(value)
				if problem != "" {
					t.Errorf("%s:%d: %s: %q %s", FileName, lineNo, key, value, problem)
				} else if spec.def != nil && !reflect.DeepEqual(v, spec.def) {
					t.Errorf("%s:%d documents %s: %s but the default is %s", FileName, lineNo, key, value, spec.Default)
				}
			}
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range Options() {
		if _, ok := documented[s.Key]; !ok {
			t.Errorf("option %s is declared in options.go but not documented in %s", s.Key, FileName)
		}
	}
}

// TestShippedFileLoadsAsDefaults checks that the shipped file sets nothing: loading it gives the
// defaults, so IsSet stays meaningful (reactive-mode defaults depend on it).
func TestShippedFileLoadsAsDefaults(t *testing.T) {
	c, warnings, err := Load(".", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 || len(c.Keys()) != 0 {
		t.Fatalf("shipped file sets %v, warnings %v", c.Keys(), warnings)
	}
	// Uncommenting every documented line gives a valid configuration.
	data, err := os.ReadFile(FileName)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	prev := ""
	for _, line := range strings.Split(string(data), "\n") {
		if docLine.MatchString(line) && prev == "#" && !strings.HasPrefix(line, "# rest.auth.token-file:") {
			b.WriteString(strings.TrimPrefix(line, "# ") + "\n")
		}
		prev = line
	}
	all, warnings, err := Build(fileEntries(t, b.String()))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("uncommented file: %v, warnings %v", err, warnings)
	}
	if len(all.Keys()) != len(Options())-1 {
		t.Fatalf("uncommented file sets %d keys; want %d", len(all.Keys()), len(Options())-1)
	}
}
