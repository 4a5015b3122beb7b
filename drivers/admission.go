package drivers

import (
	"fmt"
	"log/slog"
)

// CallState is the error of a call to a driver that is not started yet (ErrNotStarted) or
// already closed (ErrClosed); nil when the driver can take calls.
func CallState(started, closed bool) error {
	switch {
	case closed:
		return ErrClosed
	case !started:
		return ErrNotStarted
	}
	return nil
}

// CheckAdmission is the first step of a driver's Admit: it refuses w when the driver
// cannot take calls (state, from CallState) or when w's node is blocked (ErrBlocked,
// logged). blocked is consulted only when state is nil.
func CheckAdmission(log *slog.Logger, w Worker, state error, blocked BlockedNodes) error {
	if state != nil {
		return fmt.Errorf("admit TaskManager %s: %w", w.ID, state)
	}
	if blocked(w.Node) {
		log.Info("refusing TaskManager on blocked node", "taskmanager", w.ID, "node", w.Node)
		return fmt.Errorf("admit TaskManager %s on node %s: %w", w.ID, w.Node, ErrBlocked)
	}
	return nil
}
