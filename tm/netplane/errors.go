package netplane

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error returned by this package wraps one of them
// together with the channel and, where relevant, the peer address.
var (
	// ErrReleased: the channel's attempt was dropped by ReleaseAttempt.
	ErrReleased = errors.New("netplane: channel released")
	// ErrPlaneClosed: the local plane was closed.
	ErrPlaneClosed = errors.New("netplane: plane closed")
	// ErrPeerLost: the TCP connection to the peer plane failed.
	ErrPeerLost = errors.New("netplane: lost connection to peer")
	// ErrChannelReset: the other end of the channel aborted it.
	ErrChannelReset = errors.New("netplane: channel reset")
	// ErrOutputClosed: Write or Flush after Close.
	ErrOutputClosed = errors.New("netplane: output already closed")
	// ErrProtocol: a malformed frame or a peer that broke the protocol.
	ErrProtocol = errors.New("netplane: protocol violation")
	// ErrUnauthenticated: a peer without the internal secret, or with another one.
	ErrUnauthenticated = errors.New("netplane: peer not authenticated")
)

// PeerLostError fails the channels of a connection to a peer plane that broke; it
// matches ErrPeerLost (errors.Is) and names the peer's listen address, so a task can say
// which TaskManager it lost.
type PeerLostError struct {
	Channel ChannelID
	Peer    string // the peer plane's listen address
	Cause   error  // what broke the connection; nil when not known
}

func (e *PeerLostError) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("channel %s: %v %s", e.Channel, ErrPeerLost, e.Peer)
	}
	return fmt.Sprintf("channel %s: %v %s: %v", e.Channel, ErrPeerLost, e.Peer, e.Cause)
}

func (e *PeerLostError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrPeerLost}
	}
	return []error{ErrPeerLost, e.Cause}
}
