package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// kv flattens entries into key → value for comparisons.
func kv(entries []Entry) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		m[e.Key] = e.Value
	}
	return m
}

func TestParseFlat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"simple", "rest.port: 8081\n", map[string]string{"rest.port": "8081"}},
		{"value with spaces", "heartbeat.timeout: 10 s\n", map[string]string{"heartbeat.timeout": "10 s"}},
		{"colon inside value", "state.checkpoints.dir: hdfs://nn:8020/x\n", map[string]string{"state.checkpoints.dir": "hdfs://nn:8020/x"}},
		{"colon-space inside value (not strict YAML)", "env.java.opts: -Da: b\n", map[string]string{"env.java.opts": "-Da: b"}},
		{"comments and blank lines", "# header\n\n  # indented comment\nrest.port: 1 # trailing\n", map[string]string{"rest.port": "1"}},
		{"hash without space is part of the value", "rest.auth.token: ab#cd\n", map[string]string{"rest.auth.token": "ab#cd"}},
		{"double quotes", `rest.auth.token: "a # b \"c\""` + "\n", map[string]string{"rest.auth.token": `a # b "c"`}},
		{"single quotes", "yarn.application.name: 'it''s # mine' # comment\n", map[string]string{"yarn.application.name": "it's # mine"}},
		{"CRLF line endings", "rest.port: 1\r\nheartbeat.timeout: 5 s\r\n", map[string]string{"rest.port": "1", "heartbeat.timeout": "5 s"}},
		{"byte order mark", "\xef\xbb\xbfrest.port: 2\n", map[string]string{"rest.port": "2"}},
		{"no trailing newline", "rest.port: 3", map[string]string{"rest.port": "3"}},
		{"empty file", "", map[string]string{}},
		{"only comments", "# nothing\n#rest.port: 1\n", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, _, err := Parse(strings.NewReader(tt.in), "flink-conf.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := kv(entries); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v; want %v", got, tt.want)
			}
		})
	}
}

func TestParseLineNumbersAndSources(t *testing.T) {
	in := "# c\n\nrest.port: 1\nheartbeat.timeout: 5 s\n"
	entries, _, err := Parse(strings.NewReader(in), "conf/flink-conf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Key: "rest.port", Value: "1", Source: Source{Kind: FromFile, File: "conf/flink-conf.yaml", Line: 3, Key: "rest.port"}},
		{Key: "heartbeat.timeout", Value: "5 s", Source: Source{Kind: FromFile, File: "conf/flink-conf.yaml", Line: 4, Key: "heartbeat.timeout"}},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Fatalf("got %+v; want %+v", entries, want)
	}
	if got := entries[1].Source.String(); got != "conf/flink-conf.yaml:4" {
		t.Fatalf("source = %q", got)
	}
}

func TestParseEmptyValueWarns(t *testing.T) {
	entries, warnings, err := Parse(strings.NewReader("rest.port:\nrest.address: x\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Key != "rest.address" {
		t.Fatalf("entries = %+v", entries)
	}
	if len(warnings) != 1 || warnings[0].Kind != EmptyValue || warnings[0].String() != "f.yaml:1: configuration key rest.port has no value and is ignored" {
		t.Fatalf("warnings = %v", warnings)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no separator", "rest.port: 1\nrest.port 2\n", `f.yaml:2: "rest.port 2" is not a "key: value" line (a space must follow the colon)`},
		{"colon without space", "rest.port:8081\n", `f.yaml:1: "rest.port:8081" is not a "key: value" line (a space must follow the colon)`},
		{"empty key", "\n: 5\n", `f.yaml:2: empty key before ":"`},
		{"unterminated quote", "a.b: \"abc\n", `f.yaml:1: value of a.b: unterminated quoted value`},
		{"text after quote", "a.b: 'x' y\n", `f.yaml:1: value of a.b: unexpected text "y" after the closing quote`},
		{"yaml syntax", "jobmanager:\n  rpc:\n    port: 1\n  bad: [\n", `f.yaml:4: did not find expected node content`},
		{"yaml top-level list", "- a\n- b\n", `f.yaml:1: the top level must be a mapping of keys to values`},
		{"yaml list of maps", "metrics:\n  reporters:\n    - a: 1\n", `f.yaml:3: value of metrics.reporters: list items must be plain values`},
		{"yaml strict value", "jobmanager:\n  rpc: a: b\n", `f.yaml:2: mapping values are not allowed in this context`},
		{"invalid utf8", "a.b: 1\nc.d: \xff\n", `f.yaml:2: not valid UTF-8 text`},
		{"two documents", "a:\n  b: 1\n---\nc:\n  d: 2\n", `f.yaml:3: more than one YAML document`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(tt.in), "f.yaml")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if err.Error() != tt.want {
				t.Fatalf("error = %q; want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestParseNestedMatchesFlat(t *testing.T) {
	flat := `jobmanager.adaptive-scheduler.min-parallelism-increase: 2
jobmanager.adaptive-scheduler.submission.resource-wait-timeout: 10 s
jobmanager.rpc.port: 6124
state.checkpoints.dir: hdfs://nn:8020/x
metrics.reporters: prom;jmx
`
	nested := `jobmanager:
  adaptive-scheduler:
    min-parallelism-increase: 2
    submission:
      resource-wait-timeout: 10 s
  rpc:
    port: 6124
state.checkpoints.dir: hdfs://nn:8020/x
metrics:
  reporters: [prom, jmx]
`
	inline := `jobmanager: {adaptive-scheduler: {min-parallelism-increase: 2, submission: {resource-wait-timeout: 10 s}}, rpc: {port: 6124}}
state.checkpoints.dir: "hdfs://nn:8020/x"
metrics.reporters:
  - prom
  - jmx
`
	f, _, err := Parse(strings.NewReader(flat), "flat")
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"nested": nested, "inline": inline} {
		n, _, err := Parse(strings.NewReader(doc), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(kv(n), kv(f)) {
			t.Fatalf("%s: got %v; want %v", name, kv(n), kv(f))
		}
	}
	n, _, _ := Parse(strings.NewReader(nested), "nested")
	if n[0].Source.Line != 3 || n[1].Source.Line != 5 || n[2].Source.Line != 7 {
		t.Fatalf("nested lines = %d %d %d; want 3 5 7", n[0].Source.Line, n[1].Source.Line, n[2].Source.Line)
	}
}

func TestParseNestedEmptyValueWarns(t *testing.T) {
	entries, warnings, err := Parse(strings.NewReader("rest:\n  address:\n  port: 1\n"), "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || len(warnings) != 1 || warnings[0].Key != "rest.address" || warnings[0].Source.Line != 2 {
		t.Fatalf("entries %+v warnings %+v", entries, warnings)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"rest.port: 8081\n",
		"a: b: c\n# c\nx: 'q''q'\n",
		"jobmanager:\n  rpc:\n    port: 1\n",
		"jobmanager: {a: {b: 1}}\nl: [1, 2]\n",
		"k: \"unterminated\n",
		"- a\n",
		"a: &x 1\nb: *x\n",
		"\xef\xbb\xbf: x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, warnings, err := Parse(strings.NewReader(s), "fuzz.yaml")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, not *ParseError", err, err)
			}
			return
		}
		nLines := strings.Count(s, "\n") + 1
		for _, e := range append(entries, warningEntries(warnings)...) {
			if e.Key == "" {
				t.Fatalf("empty key from %q", s)
			}
			if e.Source.Line < 1 || e.Source.Line > nLines {
				t.Fatalf("line %d outside 1..%d for %q", e.Source.Line, nLines, s)
			}
		}
		// Whatever parses must also build (values may be invalid, but never panic).
		_, _, _ = Build(entries)
	})
}

func warningEntries(ws []Warning) []Entry {
	out := make([]Entry, 0, len(ws))
	for _, w := range ws {
		out = append(out, Entry{Key: w.Key, Source: w.Source})
	}
	return out
}
