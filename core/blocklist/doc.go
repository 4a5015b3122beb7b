// Package blocklist tracks blocked nodes (FLIP-224): machines that must not receive new
// slots (MARK_BLOCKED) or whose tasks must also leave (MARK_BLOCKED_AND_EVACUATE_TASKS).
//
// The package is pure: time arrives as an argument, nothing here starts goroutines or
// touches the clock. The core owns one Tracker; the AM's REST layer calls the request
// helpers in rest.go to validate bodies and pick status codes.
//
//	Add(now, nodes)          RemoveExpired(now)         Remove(ids)
//	      │                         │                        │
//	      ▼                         ▼                        ▼
//	┌───────────────────────── Tracker ─────────────────────────┐
//	│ id → BlockedNode{Action, Start, End (zero: never), Cause} │
//	└───────────────────────────────────────────────────────────┘
//	      │ added / merged (changed records only)
//	      ▼
//	core: release free slots (MARK_BLOCKED) or all slots (EVACUATE),
//	      tell the driver the new blocked set
//
// Merging a node that is already blocked keeps the stronger action, the earlier start,
// the later end (no end beats any end) and the union of the causes, joined with ","
// in first-seen order.
package blocklist
