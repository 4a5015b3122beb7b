package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// metaFS reads metadata in one attempt of a storage's retry loop: *hdfs.Client on HDFS,
// osMeta on a local file system.
type metaFS interface {
	Stat(p string) (fs.FileInfo, error)
	ReadDir(p string) ([]fs.FileInfo, error)
}

// metaRunner runs fn for op on the cleaned name n under a storage's retry loop, with the
// storage's metaFS and n's path in it.
type metaRunner func(ctx context.Context, op, n string, fn func(m metaFS, p string) error) error

// statName is Stat of both storages.
func statName(ctx context.Context, l location, run metaRunner, name string) (FileInfo, error) {
	n, err := l.name("stat", name, true)
	if err != nil {
		return FileInfo{}, err
	}
	var fi FileInfo
	err = run(ctx, "stat", n, func(m metaFS, p string) error {
		st, err := m.Stat(p)
		if err != nil {
			return err
		}
		fi = fileInfoOf(st)
		return nil
	})
	return fi, err
}

// listDir is List of both storages: the entries of dir sorted by name, without
// uncommitted (temporary) files.
func listDir(ctx context.Context, l location, run metaRunner, dir string) ([]FileInfo, error) {
	n, err := l.name("list", dir, true)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	err = run(ctx, "list", n, func(m metaFS, p string) error {
		st, err := m.Stat(p)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("%s is a file, want a directory", p)
		}
		entries, err := m.ReadDir(p)
		if err != nil {
			return err
		}
		out = make([]FileInfo, 0, len(entries))
		for _, e := range entries {
			if !isTempName(e.Name()) {
				out = append(out, fileInfoOf(e))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// osMeta is the metaFS of the local file system.
type osMeta struct{}

func (osMeta) Stat(p string) (fs.FileInfo, error) { return os.Stat(p) }

// ReadDir skips entries removed while it reads (a writer's temporary file after its commit).
func (osMeta) ReadDir(p string) ([]fs.FileInfo, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		st, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
