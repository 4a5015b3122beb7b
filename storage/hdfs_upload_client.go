package storage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// errUploadCut is what the connections of a cut upload client answer.
var errUploadCut = errors.New("upload session abandoned")

// uploadClient is a colinmarc/hdfs client of one multi-block upload. It exists so that a
// failed session can be abandoned safely: cut closes every connection it opened (namenode and
// datanodes) and refuses new ones, so that closing the failed FileWriter afterwards (which
// colinmarc/hdfs needs to stop the block stream's goroutines) cannot reach the namenode. Were
// that close to reach it, it could commit the broken block at the length the client wrote
// rather than the length the datanode holds, and no lease recovery would then close the file.
type uploadClient struct {
	*hdfs.Client

	mu     sync.Mutex
	cut    bool
	closed bool
	conns  []net.Conn
}

// newUploadClient dials a client of its own for one upload.
func (s *hdfsStorage) newUploadClient() (*uploadClient, error) {
	uc := &uploadClient{}
	dialer := &net.Dialer{Timeout: s.opts.RPCTimeout, KeepAlive: 30 * time.Second}
	dial := func(wrap func(net.Conn) net.Conn) func(ctx context.Context, network, addr string) (net.Conn, error) {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			uc.mu.Lock()
			defer uc.mu.Unlock()
			if uc.cut {
				return nil, errUploadCut
			}
			conn, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			uc.conns = append(uc.conns, conn)
			return wrap(conn), nil
		}
	}
	c, err := hdfs.NewClient(hdfs.ClientOptions{
		Addresses: s.addrs,
		User:      s.user,
		NamenodeDialFunc: dial(func(conn net.Conn) net.Conn {
			return &deadlineConn{Conn: conn, timeout: s.opts.RPCTimeout}
		}),
		DatanodeDialFunc: dial(s.datanodeConn),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to namenode %v as %q: %w", s.addrs, s.user, err)
	}
	uc.Client = c
	return uc, nil
}

// abandon cuts every connection of the client, closes fw (if any) only to end its goroutines,
// and closes the client.
func (uc *uploadClient) abandon(fw *hdfs.FileWriter) {
	uc.mu.Lock()
	uc.cut = true
	conns := uc.conns
	uc.conns = nil
	uc.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	if fw != nil {
		_ = fw.Close() // fails: nothing reaches the namenode any more
	}
	uc.close()
}

// close closes the client once (colinmarc/hdfs panics on a second Close).
func (uc *uploadClient) close() {
	uc.mu.Lock()
	done := uc.closed
	uc.closed = true
	uc.mu.Unlock()
	if !done {
		_ = uc.Client.Close()
	}
}

// datanodeConn is the hook through which tests see (and break) datanode connections.
func (s *hdfsStorage) datanodeConn(conn net.Conn) net.Conn {
	if s.wrapDatanode != nil {
		return s.wrapDatanode(conn)
	}
	return conn
}
