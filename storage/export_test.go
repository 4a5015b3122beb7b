package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"

	"github.com/colinmarc/hdfs/v2"
)

// SetUploadFault makes every upload session of s's writers write through wrap (session counts
// from 1 per writer: each whole upload of a file of up to SessionBlocks blocks, each block
// session of a bigger one); s must be an HDFS storage.
func SetUploadFault(s Storage, wrap func(session int, w io.Writer) io.Writer) {
	s.(*hdfsStorage).wrapUpload = wrap
}

// SetDatanodeConn makes every datanode connection of s go through wrap.
func SetDatanodeConn(s Storage, wrap func(net.Conn) net.Conn) {
	s.(*hdfsStorage).wrapDatanode = wrap
}

// SetSessionBytes fixes the bytes per upload session of s's block uploads (rounded up to
// whole blocks); negative makes every upload one session long (as uploads were before block
// sessions), 0 restores the default.
func SetSessionBytes(s Storage, n int64) {
	s.(*hdfsStorage).sessionBytes = n
}

// SessionBlocks is how many blocks an upload session writes after the namenode refused a
// block as not replicated yet, and the size up to which a file goes up in one attempt.
const SessionBlocks = sessionBlocks

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
