//go:build cgo

package state

// OffHeap says whether Pebble's block cache and memtables are outside the Go heap (C
// malloc under cgo), so the Go runtime's memory limit does not count them.
const OffHeap = true
