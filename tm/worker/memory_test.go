package worker

import (
	"strings"
	"testing"

	"github.com/tidestream/tide/state"
)

func TestMemoryConfig(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name          string
		m             MemoryConfig
		managed       int64
		pebbleLimit   int64 // GoMemoryLimit with pebble (cgo build)
		hashmapLimit  int64
		invalidSubstr string
	}{
		{name: "fraction of the process size", m: MemoryConfig{ProcessSize: 1000 * mib, ManagedFraction: 0.4},
			managed: 400 * mib, pebbleLimit: 600 * mib, hashmapLimit: 1000 * mib},
		{name: "size wins over fraction", m: MemoryConfig{ProcessSize: 1000 * mib, ManagedSize: 100 * mib, ManagedFraction: 0.4},
			managed: 100 * mib, pebbleLimit: 900 * mib, hashmapLimit: 1000 * mib},
		{name: "nothing configured (in-process TaskManagers)", m: MemoryConfig{}},
		{name: "managed not below the process size", m: MemoryConfig{ProcessSize: 100 * mib, ManagedSize: 100 * mib},
			managed: 100 * mib, invalidSubstr: "taskmanager.memory.managed.size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.Managed(); got != c.managed {
				t.Fatalf("Managed() = %d, want %d", got, c.managed)
			}
			err := c.m.validate()
			if c.invalidSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), c.invalidSubstr) {
					t.Fatalf("validate() = %v, want an error naming %s", err, c.invalidSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.pebbleLimit
			if !state.OffHeap {
				want = c.m.ProcessSize
			}
			if got := c.m.GoMemoryLimit(state.Pebble); got != want {
				t.Errorf("GoMemoryLimit(pebble) = %d, want %d", got, want)
			}
			if got := c.m.GoMemoryLimit(state.Hashmap); got != c.hashmapLimit {
				t.Errorf("GoMemoryLimit(hashmap) = %d, want %d", got, c.hashmapLimit)
			}
		})
	}
}
