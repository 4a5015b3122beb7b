package exec

import (
	"errors"

	"github.com/tidestream/tide/tm/netplane"
)

// LostPeerError is the failure of a subtask whose data-plane connection to another
// TaskManager of the attempt broke: the AM counts it as part of that TaskManager's loss
// (core.TaskStateChanged.LostPeer), not as a failure of its own.
type LostPeerError struct {
	TaskManager string // the peer's TaskManager id
	Err         error
}

func (e *LostPeerError) Error() string { return e.Err.Error() }
func (e *LostPeerError) Unwrap() error { return e.Err }

// LostPeer is the TaskManager whose broken connection err reports ("" when none).
func LostPeer(err error) string {
	if lp, ok := errors.AsType[*LostPeerError](err); ok {
		return lp.TaskManager
	}
	return ""
}

// lostPeer names the TaskManager of the attempt at the far end of a broken data-plane
// connection in err: a *LostPeerError wrapping err, or err as it is.
func (p *plan) lostPeer(err error) error {
	pl, ok := errors.AsType[*netplane.PeerLostError](err)
	if !ok || errors.Is(err, netplane.ErrPlaneClosed) {
		return err // no broken connection, or this TaskManager's own plane closed
	}
	for _, l := range p.spec.Locations {
		if l.DataAddress == pl.Peer && l.TaskManagerID != "" {
			return &LostPeerError{TaskManager: l.TaskManagerID, Err: err}
		}
	}
	return err
}
