package stream

import (
	"fmt"
	"sort"
	"sync"
)

// JobBuilder builds a job from its command-line arguments.
type JobBuilder func(args []string) (*Job, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]JobBuilder{}
)

// Register makes a job available by name (tide jobmanager --job-classname NAME). It panics
// on a duplicate name or a nil builder, as registering is done once at program start.
func Register(name string, build func(args []string) (*Job, error)) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if build == nil {
		panic(fmt.Sprintf("stream: Register(%q) with a nil builder", name))
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("stream: job %q registered twice", name))
	}
	registry[name] = build
}

// Lookup returns the builder registered under name.
func Lookup(name string) (JobBuilder, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	b, ok := registry[name]
	return b, ok
}

// Names lists the registered jobs, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
