package stream

import "github.com/tidestream/tide/state"

// BackendSnapshotter is implemented by a StateWriter that takes the entries of the
// subtask's keyed state backend itself: an asynchronous checkpoint reads them from a view
// of the backend in the background (or uploads the backend's files), so at the barrier an
// operator writes only the state it keeps outside the backend. Keyed state that lives in
// the backend (KeyedState, ValueState and the other views on Runtime.KeyedBackend) skips
// its entries in Snapshot when the writer snapshots that backend.
type BackendSnapshotter interface {
	SnapshotsBackend(be state.Backend) bool
}

// backendCovered reports whether w takes be's entries itself.
func backendCovered(w StateWriter, be state.Backend) bool {
	b, ok := w.(BackendSnapshotter)
	return ok && be != nil && b.SnapshotsBackend(be)
}
