//go:build !cgo

package state

// OffHeap says whether Pebble's block cache and memtables are outside the Go heap; without
// cgo they are Go allocations, counted by the Go runtime's memory limit.
const OffHeap = false
