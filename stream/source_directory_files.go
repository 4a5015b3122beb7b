package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tidestream/tide/storage"
)

// A directory source's Dir is a local path, a file:// URI or an hdfs:// URI. Local files
// are read with os; HDFS files through storage, as the file sink writes them, so a
// YARN job can read its input from HDFS instead of from every node's disk.

// listTimeout bounds the listing of an hdfs:// directory (the namenode down): the
// enumerator is created on the AM's loop.
const listTimeout = time.Minute

// dirFile is one file a directory source reads: a local path or an hdfs:// URI.
type dirFile struct {
	path string
	size int64
}

// remoteDir says whether dir is read through storage rather than the local file system.
func remoteDir(dir string) bool { return strings.HasPrefix(strings.ToLower(dir), "hdfs://") }

// localDir is dir as a local path: a file:// URI's path, or dir itself. A URI is checked
// as the file sink checks its output (storage.CheckURI), so another scheme is refused by
// name rather than read as a local directory.
func localDir(dir string) (string, error) {
	if !schemeRE.MatchString(dir) {
		return dir, nil
	}
	if err := storage.CheckURI(dir); err != nil {
		return "", fmt.Errorf("directory source: input %q: %w", dir, err)
	}
	u, err := url.Parse(dir) // CheckURI parsed it already
	if err != nil {
		return "", fmt.Errorf("directory source: input %q: %w", dir, err)
	}
	return filepath.FromSlash(u.Path), nil
}

// hiddenFile says whether a directory source skips the file name: names starting with "."
// or "_", as Flink's DefaultFileFilter and Hadoop's FileInputFormat skip them (in-progress
// files of tide's file sink, _SUCCESS markers of Hadoop and Spark jobs).
func hiddenFile(name string) bool { return name == "" || name[0] == '.' || name[0] == '_' }

// listFiles lists the regular files of dir that are not hidden (hiddenFile), by path.
func listFiles(dir string) ([]dirFile, error) {
	if remoteDir(dir) {
		return listRemote(dir)
	}
	local, err := localDir(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(local)
	if err != nil {
		return nil, fmt.Errorf("directory source: listing %s: %w", dir, err)
	}
	var files []dirFile
	for _, e := range entries {
		if !e.Type().IsRegular() || hiddenFile(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("directory source: reading the size of %s: %w", filepath.Join(local, e.Name()), err)
		}
		files = append(files, dirFile{filepath.Join(local, e.Name()), info.Size()})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}

func listRemote(dir string) (files []dirFile, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	st, err := storage.Open(ctx, dir, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("directory source: %w", err)
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("directory source: closing %s: %w", dir, cerr)
		}
	}()
	infos, err := st.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("directory source: listing %s: %w", dir, err)
	}
	root := strings.TrimSuffix(st.URI(), "/")
	for _, fi := range infos { // sorted by name
		if fi.IsDir || hiddenFile(fi.Name) {
			continue
		}
		files = append(files, dirFile{root + "/" + fi.Name, fi.Size})
	}
	return files, nil
}

// fileOpener opens a reader's files: local paths with os, hdfs:// URIs through one
// storage per directory, kept until the reader closes.
type fileOpener struct {
	stores map[string]storage.Storage
}

// open opens path at byte pos.
func (o *fileOpener) open(ctx context.Context, path string, pos int64) (io.ReadCloser, error) {
	f, err := o.openFile(ctx, path)
	if err != nil {
		return nil, err
	}
	if pos == 0 {
		return f, nil
	}
	if s, ok := f.(io.Seeker); ok {
		_, err = s.Seek(pos, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, f, pos)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("seeking to byte %d: %w", pos, err)
	}
	return f, nil
}

// openFile opens path: a local file, or an hdfs:// file through its directory's storage.
func (o *fileOpener) openFile(ctx context.Context, path string) (io.ReadCloser, error) {
	if !remoteDir(path) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	i := strings.LastIndexByte(path, '/')
	dir, name := path[:i], path[i+1:]
	st := o.stores[dir]
	if st == nil {
		var err error
		if st, err = storage.Open(ctx, dir, storage.Options{}); err != nil {
			return nil, err
		}
		if o.stores == nil {
			o.stores = map[string]storage.Storage{}
		}
		o.stores[dir] = st
	}
	return st.Open(ctx, name)
}

// close releases the storages.
func (o *fileOpener) close() error {
	var errs []error
	for dir, st := range o.stores {
		if err := st.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", dir, err))
		}
	}
	o.stores = nil
	return errors.Join(errs...)
}
