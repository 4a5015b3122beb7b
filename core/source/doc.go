// Package source is the coordinator side of FLIP-27 split assignment: which readers
// (source subtasks) are registered, which splits were handed to which reader since the
// last completed checkpoint, and what goes back to the enumerator when a reader fails
// (partial restore).
//
//	Assign ──► current epoch ──SnapshotState(n)──► epoch n ──OnCheckpointComplete(m ≥ n)──► dropped
//	                │                                  │
//	                └──────── ReaderFailed(s) ─────────┘──► splits of s after the restored
//	                                                        checkpoint, back to the enumerator
//
// Every change is also recorded as a write-ahead log Entry (TakeLog); the AM persists
// entries before acting on them, and Replay rebuilds the tracker from the log, so the
// coordinator can fail over without restarting its readers. Compact turns the current
// state into one entry that replaces the log so far.
//
// Splits are opaque: an id and the connector's bytes. The package is pure.
package source
