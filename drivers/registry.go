package drivers

import (
	"fmt"
	"sort"
	"strings"
)

// Factory builds a driver from the AM's flat configuration (flink-conf keys).
type Factory func(config map[string]string) (Driver, error)

// Registry maps driver names to factories. The AM builds it explicitly (no init side
// effects), so the set of drivers in a binary is visible in one place.
type Registry map[string]Factory

// Register adds a factory; a name registered twice is an error.
func (r Registry) Register(name string, f Factory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("register driver %q: %w", name, ErrDuplicateDriver)
	}
	r[name] = f
	return nil
}

// Merge adds every factory of other; any name present in both is an error.
func (r Registry) Merge(other Registry) error {
	for _, name := range other.Names() {
		if err := r.Register(name, other[name]); err != nil {
			return err
		}
	}
	return nil
}

// Names returns the registered names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the driver called name.
func (r Registry) New(name string, config map[string]string) (Driver, error) {
	f, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("driver %q: %w (known: %s)", name, ErrUnknownDriver, strings.Join(r.Names(), ", "))
	}
	d, err := f(config)
	if err != nil {
		return nil, fmt.Errorf("build driver %q: %w", name, err)
	}
	return d, nil
}
