package worker

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/tm/exec"
)

// MemoryConfig is the TaskManager's memory configuration (taskmanager.memory.*).
type MemoryConfig struct {
	// ProcessSize is taskmanager.memory.process.size in bytes.
	ProcessSize int64
	// ManagedSize is taskmanager.memory.managed.size in bytes (0: unset).
	ManagedSize int64
	// ManagedFraction is taskmanager.memory.managed.fraction, used when ManagedSize is 0.
	ManagedFraction float64
}

// Managed is the managed memory in bytes: ManagedSize, else ManagedFraction of
// ProcessSize (0: none configured, Pebble instances keep Pebble's defaults).
func (m MemoryConfig) Managed() int64 {
	if m.ManagedSize > 0 {
		return m.ManagedSize
	}
	return int64(m.ManagedFraction * float64(m.ProcessSize))
}

// GoMemoryLimit is the soft limit for the Go runtime with the given backend: with pebble,
// the process size minus managed memory when Pebble's cache and memtables live outside
// the Go heap (cgo builds); the process size otherwise (the hashmap backend's state is Go
// heap and uses no managed memory). 0 when no process size is known.
func (m MemoryConfig) GoMemoryLimit(backend state.Type) int64 {
	if m.ProcessSize <= 0 {
		return 0
	}
	if backend == state.Pebble && state.OffHeap {
		return m.ProcessSize - m.Managed()
	}
	return m.ProcessSize
}

// setGoMemoryLimit sets Go's soft memory limit for the job's backend, unless GOMEMLIMIT
// is set, so the Go heap is collected before the process outgrows
// taskmanager.memory.process.size.
func (w *worker) setGoMemoryLimit(backend state.Type) {
	limit := w.cfg.Memory.GoMemoryLimit(backend)
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(limit)
	w.log.Info("Go memory limit set", "bytes", limit, "backend", backend, "processSize", w.cfg.Memory.ProcessSize)
}

func (m MemoryConfig) validate() error {
	if m.ProcessSize > 0 && m.Managed() >= m.ProcessSize {
		return fmt.Errorf("taskmanager.memory.managed.size (%d bytes) must be smaller than taskmanager.memory.process.size (%d bytes)", m.Managed(), m.ProcessSize)
	}
	return nil
}

// openMemory makes the TaskManager's shared Pebble budget (nil when none is configured).
func openMemory(m MemoryConfig, slots int, log *slog.Logger) (*state.Memory, error) {
	managed := m.Managed()
	if managed <= 0 {
		return nil, nil
	}
	mem, err := state.NewMemory(managed, slots)
	if err != nil {
		return nil, err
	}
	log.Info("managed memory for the pebble state backend", "bytes", managed, "processSize", m.ProcessSize,
		"slots", slots, "memtableBytes", mem.MemTableSize())
	return mem, nil
}

// cleanPebbleDir removes stale pebble instance directories under dir once per TaskManager
// and directory (the AM's state.backend.pebble.localdir may differ from the TaskManager's).
func (w *worker) cleanPebbleDir(dir string) {
	if w.cleaned[dir] {
		return
	}
	w.cleaned[dir] = true
	removed, err := state.CleanStale(dir, w.log)
	if err != nil {
		w.log.Warn("cleaning stale pebble directories", "dir", dir, "err", err)
	}
	if len(removed) > 0 {
		w.log.Info("cleaned stale pebble directories", "dir", dir, "removed", len(removed))
	}
	// Checkpoint scratch directories live beside the instances (exec: scratchDir).
	removed, err = exec.CleanStaleScratch(dir, w.log)
	if err != nil {
		w.log.Warn("cleaning stale checkpoint scratch directories", "dir", dir, "err", err)
	}
	if len(removed) > 0 {
		w.log.Info("cleaned stale checkpoint scratch directories", "dir", dir, "removed", len(removed))
	}
}
