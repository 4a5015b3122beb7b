package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// hdfsStorage is the hdfs:// implementation on github.com/colinmarc/hdfs/v2. The client is
// created on first use and dropped after a connection error, so that a restarted namenode is
// dialled afresh (the library itself would refuse to redial for several seconds).
type hdfsStorage struct {
	location
	root  string // absolute HDFS path
	addrs []string
	user  string
	opts  Options
	r     *retrier

	mu     sync.Mutex
	client *hdfs.Client
	closed bool

	lastDial atomic.Pointer[dialError] // most recent namenode dial error, for classification

	// wrapUpload, when set (by tests), wraps the destination of each upload session of a writer
	// (a whole upload of a small file, one block session of a big one; counted from 1).
	wrapUpload func(session int, w io.Writer) io.Writer
	// wrapDatanode, when set (by tests), wraps every datanode connection.
	wrapDatanode func(net.Conn) net.Conn
	// sessionBytes, when set (by tests and benchmarks), overrides the bytes per upload session
	// of a block upload (rounded up to whole blocks); negative means one session per file.
	sessionBytes int64
}

type dialError struct{ err error }

func openHDFS(ctx context.Context, u *url.URL, opts Options) (Storage, error) {
	fail := func(kind error, err error) (Storage, error) {
		return nil, &Error{Op: "open-storage", Path: u.String(), Kind: kind, Err: err}
	}
	addrs, err := namenodeAddrs(u, opts.Namenode)
	if err != nil {
		return fail(ErrNoSuchNamenode, err)
	}
	usr, err := hdfsUser(opts.User)
	if err != nil {
		return fail(nil, err)
	}
	root := path.Clean("/" + u.Path)
	host := u.Host
	if host == "" || opts.Namenode != "" {
		host = addrs[0]
	}
	s := &hdfsStorage{
		location: location{uri: trimSlash((&url.URL{Scheme: "hdfs", Host: host, Path: root}).String())},
		root:     root,
		addrs:    addrs,
		user:     usr,
		opts:     opts,
	}
	s.r = &retrier{policy: opts.Retry, log: opts.Logger.With("storage", s.uri, "hdfs_user", usr),
		classify: s.classify, reconnect: s.dropClient}
	// A namenode host that does not resolve is a configuration error: report it now rather
	// than on every later call. A namenode that is merely down is dialled lazily.
	for _, a := range addrs {
		h, _, err := net.SplitHostPort(a)
		if err != nil {
			return fail(ErrNoSuchNamenode, fmt.Errorf("namenode address %q: %w", a, err))
		}
		if _, err := net.DefaultResolver.LookupHost(ctx, h); err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
				return fail(ErrNoSuchNamenode, fmt.Errorf("namenode host %q: %w", h, err))
			}
		}
	}
	return s, nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

func (s *hdfsStorage) classify(err error) class {
	var lastDial error
	if d := s.lastDial.Load(); d != nil {
		lastDial = d.err
	}
	return classifyHDFS(err, lastDial)
}

// getClient returns the current client, dialling the namenode if there is none.
func (s *hdfsStorage) getClient() (*hdfs.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("storage %s: %w", s.uri, ErrClosed)
	}
	if s.client != nil {
		return s.client, nil
	}
	dialer := &net.Dialer{Timeout: s.opts.RPCTimeout, KeepAlive: 30 * time.Second}
	c, err := hdfs.NewClient(hdfs.ClientOptions{
		Addresses: s.addrs,
		User:      s.user,
		NamenodeDialFunc: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				s.lastDial.Store(&dialError{err})
				return nil, err
			}
			return &deadlineConn{Conn: conn, timeout: s.opts.RPCTimeout}, nil
		},
		DatanodeDialFunc: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return s.datanodeConn(conn), nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to namenode %v as %q: %w", s.addrs, s.user, err)
	}
	// The library caches the server defaults on first use without a lock; fetch them now,
	// before the client is shared, so that concurrent writers only read the cache.
	if _, err := c.ServerDefaults(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("fetching server defaults from namenode %v: %w", s.addrs, err)
	}
	s.client = c
	return c, nil
}

// dropClient closes the current client so that the next call dials again.
func (s *hdfsStorage) dropClient() {
	s.mu.Lock()
	c := s.client
	s.client = nil
	s.mu.Unlock()
	if c != nil {
		_ = c.Close() // the connection is already broken; its close error says nothing new
	}
}

func (s *hdfsStorage) Close() error {
	s.mu.Lock()
	c := s.client
	s.client = nil
	s.closed = true
	s.mu.Unlock()
	if c != nil {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return &Error{Op: "close", Path: s.uri, Err: err}
		}
	}
	return nil
}

// deadlineConn bounds every read on a namenode connection, so a hung namenode turns into a
// timeout error (and a retry) instead of a call that never returns.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	if err := c.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (s *hdfsStorage) hdfsPath(name string) string {
	if name == "" {
		return s.root
	}
	return path.Join(s.root, name)
}

// call runs fn with a client under the retry loop.
func (s *hdfsStorage) call(ctx context.Context, op, name string, fn func(c *hdfs.Client) error) error {
	return s.r.do(ctx, op, s.uriOf(name), func(int) error {
		c, err := s.getClient()
		if err != nil {
			return err
		}
		return describeRemote(fn(c))
	})
}

func (s *hdfsStorage) Create(ctx context.Context, name string) (Writer, error) {
	n, err := s.name("create", name, false)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "create", Path: s.uriOf(n), Err: context.Cause(ctx)}
	}
	return &hdfsWriter{s: s, ctx: ctx, name: n, data: newSpillBuffer(s.opts.SpillDir, s.opts.BufferSize)}, nil
}

func (s *hdfsStorage) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	n, err := s.name("open", name, false)
	if err != nil {
		return nil, err
	}
	r := &resumingReader{
		ctx: ctx,
		uri: s.uriOf(n),
		open: func(ctx context.Context, off int64) (seekReader, error) {
			var fr *hdfs.FileReader
			err := s.call(ctx, "open", n, func(c *hdfs.Client) error {
				var err error
				fr, err = openAt(ctx, c, s.hdfsPath(n), off)
				return err
			})
			if err != nil {
				return nil, err
			}
			return fr, nil
		},
		classify: s.classify,
		policy:   s.opts.Retry,
		log:      s.r.log,
	}
	fr, err := r.open(ctx, 0)
	if err != nil {
		return nil, err
	}
	r.r = fr
	if st, ok := fr.(interface{ Stat() os.FileInfo }); ok {
		r.info = st.Stat()
	}
	return r, nil
}

func (s *hdfsStorage) Stat(ctx context.Context, name string) (FileInfo, error) {
	return statName(ctx, s.location, s.meta, name)
}

func (s *hdfsStorage) List(ctx context.Context, dir string) ([]FileInfo, error) {
	return listDir(ctx, s.location, s.meta, dir)
}

// meta is the storage's metaRunner.
func (s *hdfsStorage) meta(ctx context.Context, op, n string, fn func(m metaFS, p string) error) error {
	return s.call(ctx, op, n, func(c *hdfs.Client) error { return fn(c, s.hdfsPath(n)) })
}

func (s *hdfsStorage) Delete(ctx context.Context, name string) error {
	n, err := s.name("delete", name, false)
	if err != nil {
		return err
	}
	return s.call(ctx, "delete", n, func(c *hdfs.Client) error {
		err := c.RemoveAll(s.hdfsPath(n))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
}

func (s *hdfsStorage) Rename(ctx context.Context, from, to string) error {
	f, err := s.name("rename", from, false)
	if err != nil {
		return err
	}
	t, err := s.name("rename", to, false)
	if err != nil {
		return err
	}
	return s.call(ctx, "rename", f, func(c *hdfs.Client) error {
		return s.renameOver(c, f, t)
	})
}

// renameOver renames from to to (both cleaned names), creating to's parent and replacing an
// existing file to atomically (rename2 with OVERWRITE).
func (s *hdfsStorage) renameOver(c *hdfs.Client, from, to string) error {
	if err := c.MkdirAll(path.Dir(s.hdfsPath(to)), 0o755); err != nil {
		return err
	}
	if err := c.Rename(s.hdfsPath(from), s.hdfsPath(to)); err != nil {
		return fmt.Errorf("to %s: %w", s.uriOf(to), err)
	}
	return nil
}
