package storage

import (
	"context"
	"fmt"
	"io"

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
