package drivers

import "errors"

var (
	// ErrPassive: the driver cannot start workers (standalone: scripts start them).
	ErrPassive = errors.New("driver is passive: workers are started outside the AM")
	// ErrNotStarted: a call came before Start.
	ErrNotStarted = errors.New("driver not started")
	// ErrAlreadyStarted: Start was called twice.
	ErrAlreadyStarted = errors.New("driver already started")
	// ErrClosed: a call came after Close.
	ErrClosed = errors.New("driver closed")
	// ErrUnknownWorker: the worker is not (or no longer) known to the driver.
	ErrUnknownWorker = errors.New("unknown worker")
	// ErrBlocked: the worker runs on a blocked node.
	ErrBlocked = errors.New("node is blocked")
	// ErrDuplicateDriver: a registry already has a driver of that name.
	ErrDuplicateDriver = errors.New("duplicate driver name")
	// ErrUnknownDriver: no driver of that name is registered.
	ErrUnknownDriver = errors.New("unknown driver")
)
