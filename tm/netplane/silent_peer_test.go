package netplane

import (
	"context"
	"net"
	"sync"
	"testing"
)

// silentPeer accepts TCP connections and never speaks.
type silentPeer struct {
	ln       net.Listener
	accepted chan struct{}
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

func newSilentPeer(t *testing.T) *silentPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentPeer{ln: ln, accepted: make(chan struct{}, 16)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	return s
}

func (s *silentPeer) addr() string { return s.ln.Addr().String() }

// contextWithCancelAfterAccept returns a context canceled once the silent
// peer has accepted a connection, so the dialer is stuck in the handshake.
func contextWithCancelAfterAccept(ctx context.Context, s *silentPeer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.accepted:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
