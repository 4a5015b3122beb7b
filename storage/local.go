package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// localStorage is the file:// implementation: a directory on a local (or mounted) file system.
type localStorage struct {
	location
	root string // absolute OS path
	r    *retrier
}

func openLocal(ctx context.Context, u *url.URL, opts Options) (Storage, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, &Error{Op: "open-storage", Path: u.String(), Kind: ErrUnsupportedScheme,
			Err: fmt.Errorf("file URI host %q: want file:///absolute/path", u.Host)}
	}
	if !path.IsAbs(u.Path) {
		return nil, &Error{Op: "open-storage", Path: u.String(), Kind: ErrInvalidName,
			Err: fmt.Errorf("file URI path %q is not absolute", u.Path)}
	}
	root := filepath.Clean(filepath.FromSlash(u.Path))
	s := &localStorage{
		location: location{uri: (&url.URL{Scheme: "file", Path: filepath.ToSlash(root)}).String()},
		root:     root,
		r:        &retrier{policy: opts.Retry, log: opts.Logger, classify: classifyLocal},
	}
	if err := s.r.do(ctx, "open-storage", s.uri, func(int) error { return os.MkdirAll(root, 0o755) }); err != nil {
		return nil, err
	}
	return s, nil
}

// classifyLocal maps OS errors to sentinels; nothing local is worth retrying.
func classifyLocal(err error) class {
	if c, ok := classifyCommon(err); ok {
		return c
	}
	if errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.ENOSPC) {
		return class{kind: ErrQuotaExceeded}
	}
	return class{}
}

func (s *localStorage) Close() error { return nil }

func (s *localStorage) osPath(name string) string {
	return filepath.Join(s.root, filepath.FromSlash(name))
}

func (s *localStorage) Create(ctx context.Context, name string) (Writer, error) {
	n, err := s.name("create", name, false)
	if err != nil {
		return nil, err
	}
	w := &localWriter{s: s, ctx: ctx, name: n, tmp: tempName(n)}
	err = s.r.do(ctx, "create", s.uriOf(n), func(int) error {
		if err := os.MkdirAll(filepath.Dir(s.osPath(n)), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(s.osPath(w.tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		w.f = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (s *localStorage) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	n, err := s.name("open", name, false)
	if err != nil {
		return nil, err
	}
	var f *os.File
	err = s.r.do(ctx, "open", s.uriOf(n), func(int) error {
		var err error
		f, err = os.Open(s.osPath(n))
		if err != nil {
			return err
		}
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			err = fmt.Errorf("%s is a directory, want a file", s.osPath(n))
		}
		if err != nil {
			_ = f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (s *localStorage) Stat(ctx context.Context, name string) (FileInfo, error) {
	return statName(ctx, s.location, s.meta, name)
}

func (s *localStorage) List(ctx context.Context, dir string) ([]FileInfo, error) {
	return listDir(ctx, s.location, s.meta, dir)
}

// meta is the storage's metaRunner.
func (s *localStorage) meta(ctx context.Context, op, n string, fn func(m metaFS, p string) error) error {
	return s.r.do(ctx, op, s.uriOf(n), func(int) error { return fn(osMeta{}, s.osPath(n)) })
}

func (s *localStorage) Delete(ctx context.Context, name string) error {
	n, err := s.name("delete", name, false)
	if err != nil {
		return err
	}
	return s.r.do(ctx, "delete", s.uriOf(n), func(int) error { return os.RemoveAll(s.osPath(n)) })
}

func (s *localStorage) Rename(ctx context.Context, from, to string) error {
	f, err := s.name("rename", from, false)
	if err != nil {
		return err
	}
	t, err := s.name("rename", to, false)
	if err != nil {
		return err
	}
	return s.r.do(ctx, "rename", s.uriOf(f), func(int) error {
		if _, err := os.Lstat(s.osPath(f)); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(s.osPath(t)), 0o755); err != nil {
			return err
		}
		if err := os.Rename(s.osPath(f), s.osPath(t)); err != nil {
			return fmt.Errorf("to %s: %w", s.uriOf(t), err)
		}
		return syncDir(filepath.Dir(s.osPath(t)))
	})
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil // file systems that cannot sync directories
	}
	return err
}
