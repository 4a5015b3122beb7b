// Package allocator decides at which parallelism a job runs on a set of slots and which
// slot hosts which subtasks, following the slot-sharing rules of Flink's adaptive
// scheduler:
//
//	slot-sharing group G (vertices a, b)      slots
//	  a#0 b#0  ──────────────────────────►   tm1/0
//	  a#1 b#1  ──────────────────────────►   tm1/1
//	  a#2      ──────────────────────────►   tm2/0   (b runs at a lower parallelism)
//
// Subtask i of every vertex of a group shares one slot, so a group needs as many slots as
// the largest parallelism among its vertices. Narrow groups (small upper-lower spread) are
// served first and the rest is shared out evenly. Only free slots are used for a plan.
// The package is pure and allocation-light: one decision over 10,000 slots takes well under
// a millisecond, TaskManagers are handled as positions (never as map keys), and a caller
// that decides again and again lends a Workspace so that decisions reuse their memory.
package allocator
