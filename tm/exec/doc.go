// Package exec is the task executor of a TaskManager: it deploys the subtasks the AM assigns
// to it (one goroutine per subtask running a whole operator chain), wires them to their
// peers through the data plane, aligns checkpoint barriers, writes and restores state, and
// reports every subtask's state to the AM through a Reporter.
//
//	         netplane inputs (one goroutine each, decoding)
//	ch0 ─┐
//	ch1 ─┼─► events ─► task loop ─► op1 ─► op2 ─► … ─► router ─► netplane outputs
//	ch2 ─┘     ▲          │  barrier n from every input ⇒ snapshot, forward n, ack
//	           │          └─ mailbox: checkpoint triggers (sources), completions, splits
//	 an input that delivered barrier n waits until the task has aligned n
//
// In-band messages on a channel: records (with or without event timestamp), watermarks,
// barriers; the producer closing its output is the end of the partition. Watermarks are the
// minimum over the inputs that have not ended.
//
// Calls that come from the AM (Deploy, Cancel, TriggerCheckpoint, AddSplits,
// NotifyCheckpointComplete) are queued to each subtask's mailbox in the order they are made,
// so a split assigned before a checkpoint was triggered reaches the reader before the barrier.
package exec
