package state

import (
	"fmt"
	"runtime"

	"github.com/cockroachdb/pebble/v2"
)

// Memory is a TaskManager's managed memory (taskmanager.memory.managed.size, or .fraction
// of taskmanager.memory.process.size) given to its Pebble instances: one block cache for
// the whole TaskManager, shared by every instance of every slot, against which each
// instance's memtables reserve their size (Pebble charges memtables to the cache it is
// given), so block cache and memtables together stay within the budget — Flink's
// state.backend.rocksdb.memory.managed with a shared cache and write buffer manager.
//
// One budget per TaskManager rather than a share per slot: a TaskManager runs one job,
// so isolating its slots from each other buys nothing, while a shared cache lets a busy
// slot use what an idle one leaves (a slot whose subtask holds no keyed state, a slot
// with small state). Writes stay fair: each instance's memtables are sized from its
// slot's share of the write-buffer half (WriteBufferRatio) of the budget.
//
// With cgo (the default build) the cache and memtables live outside the Go heap (C
// malloc); without it they are Go allocations (see OffHeap).
type Memory struct {
	size         int64
	slots        int
	cache        *pebble.Cache
	files        *pebble.FileCache
	memTableSize uint64
}

// WriteBufferRatio is the share of managed memory for memtables (Flink's
// state.backend.rocksdb.memory.write-buffer-ratio default); the block cache may use what
// they leave.
const WriteBufferRatio = 0.5

// memtableQueue is how many memtables of an instance may hold memory at once: Pebble's
// default MemTableStopWritesThreshold (2) plus the one being recycled.
const memtableQueue = 3

// Memtable sizes stay within [minMemTable, maxMemTable].
const (
	minMemTable = 1 << 20
	maxMemTable = 64 << 20
)

// maxOpenFiles bounds the SST files the TaskManager's instances keep open (one shared
// file cache).
const maxOpenFiles = 1000

// NewMemory makes the shared budget of size bytes for a TaskManager with slots slots.
// Close it when the TaskManager ends; instances opened with it hold their own references.
func NewMemory(size int64, slots int) (*Memory, error) {
	if size <= 0 {
		return nil, fmt.Errorf("managed memory of %d bytes: expected a positive size", size)
	}
	if slots < 1 {
		slots = 1
	}
	mt := uint64(float64(size) * WriteBufferRatio / float64(slots*memtableQueue))
	mt = min(max(mt, minMemTable), maxMemTable)
	return &Memory{size: size, slots: slots, cache: pebble.NewCache(size),
		files: pebble.NewFileCache(runtime.GOMAXPROCS(0)*2, pebble.FileCacheSize(maxOpenFiles)), memTableSize: mt}, nil
}

// Size is the budget in bytes.
func (m *Memory) Size() int64 { return m.size }

// MemTableSize is the memtable size of each instance.
func (m *Memory) MemTableSize() uint64 { return m.memTableSize }

// Close drops the TaskManager's references (instances still open keep theirs).
func (m *Memory) Close() {
	m.cache.Unref()
	m.files.Unref()
}

// apply sets the shared cache, file cache and memtable size on an instance's options.
func (m *Memory) apply(o *pebble.Options) {
	o.Cache = m.cache
	o.FileCache = m.files
	o.MemTableSize = m.memTableSize
	o.MemTableStopWritesThreshold = memtableQueue - 1
}
