package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"syscall"
)

// localStorage is the file:// implementation: a directory on a local (or mounted) file system.
type localStorage struct {
	root string // absolute OS path
	uri  string
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
		root: root,
		uri:  (&url.URL{Scheme: "file", Path: filepath.ToSlash(root)}).String(),
		r:    &retrier{policy: opts.Retry, log: opts.Logger, classify: classifyLocal},
	}
	if err := s.r.do(ctx, "open-storage", s.uri, func(int) error { return os.MkdirAll(root, 0o755) }); err != nil {
		return nil, err
	}
	return s, nil
}

// classifyLocal maps OS errors to sentinels; nothing local is worth retrying.
func classifyLocal(err error) class {
	switch {
	case errors.Is(err, ErrInvalidName):
		return class{kind: ErrInvalidName}
	case errors.Is(err, fs.ErrNotExist):
		return class{kind: ErrNotFound}
	case errors.Is(err, fs.ErrPermission):
		return class{kind: ErrPermission}
	case errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.ENOSPC):
		return class{kind: ErrQuotaExceeded}
	}
	return class{}
}

func (s *localStorage) URI() string { return s.uri }

func (s *localStorage) Close() error { return nil }

func (s *localStorage) osPath(name string) string {
	return filepath.Join(s.root, filepath.FromSlash(name))
}

func (s *localStorage) uriOf(name string) string {
	if name == "" {
		return s.uri
	}
	return s.uri + "/" + name
}

// name validates name; on error it returns an *Error for op.
func (s *localStorage) name(op, name string, root bool) (string, error) {
	n, err := cleanName(name, root)
	if err != nil {
		return "", &Error{Op: op, Path: s.uri + "/" + name, Kind: ErrInvalidName, Err: err}
	}
	return n, nil
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
	n, err := s.name("stat", name, true)
	if err != nil {
		return FileInfo{}, err
	}
	var fi FileInfo
	err = s.r.do(ctx, "stat", s.uriOf(n), func(int) error {
		st, err := os.Stat(s.osPath(n))
		if err != nil {
			return err
		}
		fi = localInfo(st)
		return nil
	})
	return fi, err
}

func (s *localStorage) List(ctx context.Context, dir string) ([]FileInfo, error) {
	n, err := s.name("list", dir, true)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	err = s.r.do(ctx, "list", s.uriOf(n), func(int) error {
		entries, err := os.ReadDir(s.osPath(n))
		if err != nil {
			return err
		}
		out = make([]FileInfo, 0, len(entries))
		for _, e := range entries {
			if isTempName(e.Name()) {
				continue
			}
			st, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since ReadDir
			}
			if err != nil {
				return err
			}
			out = append(out, localInfo(st))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
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

func localInfo(st fs.FileInfo) FileInfo {
	fi := FileInfo{Name: st.Name(), IsDir: st.IsDir(), ModTime: st.ModTime()}
	if !fi.IsDir {
		fi.Size = st.Size()
	}
	return fi
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
