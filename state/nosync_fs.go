package state

import "github.com/cockroachdb/pebble/v2/vfs"

// A Pebble instance of tide is never reopened after its process ends (its directory is
// removed on Close, or by CleanStale after a crash; durability comes from checkpoints in
// checkpoint storage, as with Flink's RocksDB backend), so the instance's fsyncs buy
// nothing. They are not free: a flush, a compaction and above all the Pebble checkpoint
// taken at a barrier (OPTIONS, MANIFEST, format marker, the new directory and its
// parent, each synced) wait for the disk, and on a busy machine each fsync can take tens
// to hundreds of milliseconds of the subtask's barrier. noSyncFS makes them no-ops; the
// page cache still serves every read of this process.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (fs noSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs noSyncFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.Open(name, opts...))
}

func (fs noSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) { return fs.wrap(fs.FS.OpenDir(name)) }

func (fs noSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

// Unwrap gives Pebble's helpers (disk health checks, FD lookups) the file system beneath.
func (fs noSyncFS) Unwrap() vfs.FS { return fs.FS }

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                       { return nil }
func (noSyncFile) SyncData() error                   { return nil }
func (noSyncFile) SyncTo(length int64) (bool, error) { return true, nil }
