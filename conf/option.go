package conf

import (
	"fmt"
	"sort"
	"strings"
)

// Spec describes one option: everything tide knows about a key except how its value is typed in
// Go. Specs are declared in options.go and never change after package initialization.
type Spec struct {
	// Key is the current (Flink 2.x where Flink has one) name.
	Key string
	// Default is the default value as it would be written in flink-conf.yaml; "" means the option
	// has no default (unset unless the user sets it).
	Default string
	// Unit names what the number counts, for documentation ("slots", "bytes", ...).
	Unit string
	// Deprecated lists older names that are still accepted, with a warning naming the new key.
	Deprecated []string
	// Fallback lists equally valid other names, accepted without a warning.
	Fallback []string
	// Description says what the option does.
	Description string
	// Reloadable is true when the AM applies a change while the job runs.
	Reloadable bool
	// Secret hides the value in Config.Map and Change values.
	Secret bool

	parse    func(raw string) (any, string)
	format   func(v any) string
	expected string
	typeName string
	def      any
}

// Expected describes the values the option accepts, as used in error messages.
func (s *Spec) Expected() string { return s.expected }

// Type names the value type: int, float, bool, string, duration, memory, enum or list.
func (s *Spec) Type() string { return s.typeName }

// Option is a typed handle on one declared key: Get reads its value from a Config.
type Option[T any] struct {
	spec *Spec
}

// Key returns the option's current name.
func (o *Option[T]) Key() string { return o.spec.Key }

// Spec returns the option's description.
func (o *Option[T]) Spec() *Spec { return o.spec }

// Get returns the option's value in c: the value set by the file or -D, else the default, else
// the zero value of T (use Lookup to tell an unset option without default apart). A nil c reads
// defaults.
func (o *Option[T]) Get(c *Config) T {
	v, _ := o.Lookup(c)
	return v
}

// Lookup returns the option's value in c and whether it has one (set, or a default exists).
func (o *Option[T]) Lookup(c *Config) (T, bool) {
	var zero T
	if c == nil {
		if o.spec.def == nil {
			return zero, false
		}
		return o.spec.def.(T), true
	}
	v, ok := c.values[o.spec.Key]
	if !ok {
		return zero, false
	}
	return v.(T), true
}

// registry holds every declared option, in declaration order and by every accepted name.
var registry = struct {
	ordered []*Spec
	byName  map[string]*Spec
}{byName: map[string]*Spec{}}

// declare registers spec with its value type and returns the typed option. It panics on a
// programming error (duplicate name, malformed default), which the package tests catch.
func declare[T any](spec Spec, vt valueType[T]) *Option[T] {
	s := spec
	s.parse = func(raw string) (any, string) { return vt.parse(raw) }
	s.format = func(v any) string { return vt.format(v.(T)) }
	s.expected = vt.expected()
	s.typeName = typeName(vt)
	if s.Default != "" {
		v, problem := vt.parse(s.Default)
		if problem != "" {
			panic(fmt.Sprintf("conf: default of %s: %q %s (expected %s)", s.Key, s.Default, problem, s.expected))
		}
		s.def = v
	}
	for _, name := range append(append([]string{s.Key}, s.Deprecated...), s.Fallback...) {
		if _, dup := registry.byName[name]; dup {
			panic("conf: option name declared twice: " + name)
		}
		registry.byName[name] = &s
	}
	registry.ordered = append(registry.ordered, &s)
	return &Option[T]{spec: &s}
}

func typeName(vt any) string {
	switch vt.(type) {
	case intType, maxParallelismType, vcoresType:
		return "int"
	case floatType:
		return "float"
	case boolType:
		return "bool"
	case durationType:
		return "duration"
	case memoryType:
		return "memory"
	case enumType:
		return "enum"
	case listType:
		return "list"
	default:
		return "string"
	}
}

// Options returns every declared option in declaration order (grouped by area, as in options.go).
func Options() []*Spec {
	return append([]*Spec(nil), registry.ordered...)
}

// Lookup finds the option a key names, by its current name or by an alias.
func Lookup(key string) (*Spec, bool) {
	s, ok := registry.byName[key]
	return s, ok
}

// openPrefixes are key prefixes whose sub-keys are free-form (named reporters, Flink's
// environment variables of the AM and TaskManager containers); keys under them are passed
// through without an unknown-key warning.
var openPrefixes = []string{"metrics.reporter.", ContainerizedMasterEnvPrefix, ContainerizedTaskManagerEnvPrefix}

// Flink's prefixes of environment variables set in the AM's (master's) and the TaskManagers'
// containers on Kubernetes: containerized.master.env.KUBECONFIG=/path sets KUBECONFIG.
const (
	ContainerizedMasterEnvPrefix      = "containerized.master.env."
	ContainerizedTaskManagerEnvPrefix = "containerized.taskmanager.env."
)

func isOpenKey(key string) bool {
	for _, p := range openPrefixes {
		if strings.HasPrefix(key, p) {
			if _, known := registry.byName[key]; !known {
				return true
			}
		}
	}
	return false
}

// knownNames returns every accepted name, sorted, for suggestions.
func knownNames() []string {
	names := make([]string, 0, len(registry.byName))
	for n := range registry.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
