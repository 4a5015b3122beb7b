package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/colinmarc/hdfs/v2"
)

// SetUploadFault makes every upload attempt of s's writers write through wrap (attempt counts
// from 1 per writer); s must be an HDFS storage.
func SetUploadFault(s Storage, wrap func(attempt int, w io.Writer) io.Writer) {
	s.(*hdfsStorage).wrapUpload = wrap
}

// RawNames lists dir of an HDFS storage including uncommitted temporary files.
func RawNames(ctx context.Context, s Storage, dir string) ([]string, error) {
	hs := s.(*hdfsStorage)
	var names []string
	err := hs.call(ctx, "list", dir, func(c *hdfs.Client) error {
		entries, err := c.ReadDir(hs.hdfsPath(dir))
		if err != nil {
			return fmt.Errorf("listing %s: %w", hs.hdfsPath(dir), err)
		}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return nil
	})
	return names, err
}

// PlantUncommitted writes data under a fresh temporary name beside name (a cleaned, non-root
// name), as a writer killed before its commit finished leaves it, and returns that name.
func PlantUncommitted(ctx context.Context, s Storage, name string, data []byte) (string, error) {
	tmp := tempName(name)
	switch st := s.(type) {
	case *localStorage:
		p := st.osPath(tmp)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		return tmp, os.WriteFile(p, data, 0o644)
	case *hdfsStorage:
		return tmp, st.call(ctx, "create", tmp, func(c *hdfs.Client) error {
			if err := c.MkdirAll(path.Dir(st.hdfsPath(tmp)), 0o755); err != nil {
				return err
			}
			// A retry follows an attempt that may have created the file already.
			if err := c.Remove(st.hdfsPath(tmp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			w, err := c.Create(st.hdfsPath(tmp))
			if err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				_ = w.Close()
				return err
			}
			return closeFile(ctx, w) // repeats while the last block is still replicating
		})
	}
	return "", fmt.Errorf("PlantUncommitted: storage %T", s)
}
