package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/colinmarc/hdfs/v2"
)

// SweepUncommitted deletes the temporary files that writers of files directly in dir left
// behind without Commit or Abort (their process was killed), for the target base names
// match accepts, and returns those target names. A writer that is still running loses its
// file: match must accept only files of writers known to be gone. A missing dir is empty.
// Both storages Open returns support it; any other Storage gets an error.
func SweepUncommitted(ctx context.Context, s Storage, dir string, match func(target string) bool) ([]string, error) {
	sw, ok := s.(uncommittedSweeper)
	if !ok {
		return nil, &Error{Op: "sweep", Path: s.URI(), Err: fmt.Errorf("storage %T cannot list uncommitted files", s)}
	}
	return sw.sweepUncommitted(ctx, dir, match)
}

type uncommittedSweeper interface {
	sweepUncommitted(ctx context.Context, dir string, match func(target string) bool) ([]string, error)
}

// tempTarget is the base name a temporary file (base name tmp) would be committed to.
func tempTarget(tmp string) (string, bool) {
	rest, ok := strings.CutPrefix(tmp, tempPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || len(rest)-i-1 != 16 {
		return "", false
	}
	return rest[:i], true
}

// sweep is sweepUncommitted over a storage's metaRunner and a remove of one path.
func sweep(ctx context.Context, l location, run metaRunner, dir string, match func(string) bool, remove func(m metaFS, p string) error) ([]string, error) {
	n, err := l.name("sweep", dir, true)
	if err != nil {
		return nil, err
	}
	var swept []string
	err = run(ctx, "sweep", n, func(m metaFS, p string) error {
		swept = swept[:0]
		entries, err := m.ReadDir(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			target, ok := tempTarget(e.Name())
			if !ok || e.IsDir() || !match(target) {
				continue
			}
			if err := remove(m, path.Join(p, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("deleting %s: %w", e.Name(), err)
			}
			swept = append(swept, target)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return swept, nil
}

func (s *localStorage) sweepUncommitted(ctx context.Context, dir string, match func(string) bool) ([]string, error) {
	return sweep(ctx, s.location, s.meta, dir, match, func(_ metaFS, p string) error { return os.Remove(filepath.FromSlash(p)) })
}

func (s *hdfsStorage) sweepUncommitted(ctx context.Context, dir string, match func(string) bool) ([]string, error) {
	return sweep(ctx, s.location, s.meta, dir, match, func(m metaFS, p string) error { return m.(*hdfs.Client).Remove(p) })
}
