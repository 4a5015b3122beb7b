package storage

import "os"

// writebackBytes is how much a local writer writes before it asks the kernel to start
// writing those bytes to disk (Pebble's BytesPerSync, RocksDB's bytes_per_sync): the
// fsync of Commit (a sink's pre-commit, a checkpoint's file) then waits for the last
// stretch only, not for everything the file took since it was opened.
const writebackBytes = 1 << 20

// writeback tracks the bytes of a file not yet handed to the kernel's writeback.
type writeback struct {
	off     int64 // bytes written so far
	started int64 // bytes whose writeback was started
}

// wrote notes n more bytes written to f and starts the writeback of every full
// writebackBytes since the last start (without waiting for it).
func (wb *writeback) wrote(f *os.File, n int) {
	wb.off += int64(n)
	if wb.off-wb.started < writebackBytes {
		return
	}
	startWriteback(f, wb.started, wb.off-wb.started)
	wb.started = wb.off
}
