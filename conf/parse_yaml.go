package conf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML reads a YAML document whose top level is a mapping and flattens nested mappings into
// dotted keys ("jobmanager: {rpc: {port: 6123}}" → "jobmanager.rpc.port"). Sequences of scalars
// become ';'-separated lists, Flink's list syntax.
func parseYAML(data []byte, name string) ([]Entry, []Warning, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, yamlError(err, name)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, nil, yamlError(err, name)
		}
		return nil, nil, &ParseError{File: name, Line: extra.Line, Msg: "more than one YAML document"}
	}
	if len(doc.Content) == 0 {
		return nil, nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, &ParseError{File: name, Line: root.Line, Msg: "the top level must be a mapping of keys to values"}
	}
	f := flattener{name: name}
	if err := f.mapping("", root, 0); err != nil {
		return nil, nil, err
	}
	return f.entries, f.warnings, nil
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 32

type flattener struct {
	name     string
	entries  []Entry
	warnings []Warning
}

func (f *flattener) mapping(prefix string, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return &ParseError{File: f.name, Line: n.Line, Msg: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" || k.Tag == "!!merge" {
			return &ParseError{File: f.name, Line: k.Line, Msg: "keys must be plain, non-empty names"}
		}
		key := k.Value
		if prefix != "" {
			key = prefix + "." + key
		}
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		src := Source{Kind: FromFile, File: f.name, Line: k.Line, Key: key}
		switch v.Kind {
		case yaml.MappingNode:
			if err := f.mapping(key, v, depth+1); err != nil {
				return err
			}
		case yaml.ScalarNode:
			if v.Tag == "!!null" || v.Value == "" {
				f.warnings = append(f.warnings, Warning{Kind: EmptyValue, Key: key, Source: src})
				continue
			}
			f.entries = append(f.entries, Entry{Key: key, Value: v.Value, Source: src})
		case yaml.SequenceNode:
			items := make([]string, 0, len(v.Content))
			for _, item := range v.Content {
				if item.Kind == yaml.AliasNode && item.Alias != nil {
					item = item.Alias
				}
				if item.Kind != yaml.ScalarNode {
					return &ParseError{File: f.name, Line: item.Line, Msg: fmt.Sprintf("value of %s: list items must be plain values", key)}
				}
				items = append(items, item.Value)
			}
			if len(items) == 0 {
				f.warnings = append(f.warnings, Warning{Kind: EmptyValue, Key: key, Source: src})
				continue
			}
			f.entries = append(f.entries, Entry{Key: key, Value: strings.Join(items, ";"), Source: src})
		default:
			return &ParseError{File: f.name, Line: v.Line, Msg: fmt.Sprintf("value of %s is not a value, list or mapping", key)}
		}
	}
	return nil
}

// yamlError turns a yaml.v3 error ("yaml: line 3: mapping values are not allowed in this
// context") into a *ParseError naming the file and line.
func yamlError(err error, name string) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = "yaml: " + strings.TrimSpace(te.Errors[0])
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ParseError{File: name, Line: line, Msg: m[2]}
	}
	return &ParseError{File: name, Msg: strings.TrimPrefix(msg, "yaml: ")}
}
