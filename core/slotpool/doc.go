// Package slotpool is tide's declarative slot pool and slot manager: it knows every
// registered TaskManager (its node, its slots, its last heartbeat), which slots are free and
// which are reserved by the running attempt, and which TaskManagers sit idle long enough to
// be released. It filters blocked nodes: registrations from a blocked node are refused,
// free slots on a newly blocked node are released, and a reserved slot freed on a blocked
// node is released instead of returning to the pool, so no free slot ever lies on a blocked
// node.
//
//	register ──► free ──reserve──► reserved ──free──► free   (node not blocked)
//	                                          └─free──► released (node blocked)
//
// The pool is pure: time arrives as arguments, and it never starts anything itself; the
// core turns its answers into effects.
package slotpool
