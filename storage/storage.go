package storage

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Storage is one checkpoint storage root (a URI such as file:///tmp/ckpt or
// hdfs://nn:8020/tide/ckpt). Names are slash-separated paths relative to the root, without
// "." or ".." elements; parent directories are created as needed. Implementations are safe for
// concurrent use.
type Storage interface {
	// Create starts a new file; it is visible under name only after Commit, which replaces
	// an existing file of that name atomically. ctx also bounds the writer's uploads.
	Create(ctx context.Context, name string) (Writer, error)
	// Open opens a committed file for reading.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// Stat describes name; errors.Is(err, ErrNotFound) when absent.
	Stat(ctx context.Context, name string) (FileInfo, error)
	// List returns the direct children of dir (""/"." is the root), sorted by name, without
	// uncommitted files; ErrNotFound if dir is absent.
	List(ctx context.Context, dir string) ([]FileInfo, error)
	// Delete removes name and, for a directory, everything under it; nil if absent.
	Delete(ctx context.Context, name string) error
	// Rename moves from to to, creating to's parent directories; an existing file to is
	// replaced atomically.
	Rename(ctx context.Context, from, to string) error
	// URI is the root's canonical URI, e.g. hdfs://127.0.0.1:8020/tide/ckpt.
	URI() string
	// Close releases connections; writers not yet committed are left uncommitted.
	Close() error
}

// Writer receives the bytes of one file. After Commit or Abort returns, the writer is finished:
// a failed Commit has discarded the temporary file, further Writes and Commits return
// ErrWriterClosed and Abort returns nil.
type Writer interface {
	io.Writer
	// Commit makes the file visible under its name.
	Commit(ctx context.Context) error
	// Abort discards everything written.
	Abort(ctx context.Context) error
}

// FileInfo describes one file or directory.
type FileInfo struct {
	Name    string // base name
	Size    int64
	IsDir   bool
	ModTime time.Time
}

// fileInfoOf is the FileInfo of a file system's entry; a directory has no size.
func fileInfoOf(st fs.FileInfo) FileInfo {
	fi := FileInfo{Name: st.Name(), IsDir: st.IsDir(), ModTime: st.ModTime()}
	if !fi.IsDir {
		fi.Size = st.Size()
	}
	return fi
}
