package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's bytes [off, off+n) to disk and
// returns without waiting (sync_file_range with SYNC_FILE_RANGE_WRITE). It is a hint: an
// error only means Commit's fsync does all the work, so it is ignored.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
