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
// barriers, end of data; the producer closing its output is the end of the partition.
// Watermarks are the minimum over the inputs whose data has not ended. Barrier alignment
// (align.go) waits for every input that is still open; an input whose producer finished
// (end of partition) counts as aligned, one that only ended its data does not.
//
// End of input and the final checkpoint (FLIP-147). When a bounded subtask's input ends (its
// reader reports EndOfInput, or every input delivered end of data) it runs EndInput through
// its chain and sends end of data downstream, but it does not finish: with checkpointing
// enabled (DeploySpec.CheckpointingEnabled) it keeps its outputs open, keeps taking part in
// checkpoints (sources still inject barriers; a subtask whose producers all finished takes
// the checkpoint on the AM's trigger) and acknowledges the next one with its final state,
// marked as ended (for the FileSink: its last part files, pre-committed). Only when a
// checkpoint taken after its end of input completed does it commit (CheckpointComplete),
// close its outputs and report FINISHED. A subtask that finished acknowledges every later
// checkpoint of the attempt with that final state, so checkpoints still complete while the
// job winds down. Consequently a bounded job only finishes after a checkpoint completes once
// all its inputs ended: checkpointing must be enabled for bounded exactly-once jobs (the AM
// triggers every execution.checkpointing.interval). Without checkpointing, sinks commit when
// their input ends and subtasks finish at once.
//
// Restoring from a checkpoint in which every subtask of a vertex had ended its input, the
// vertex is finished on restore: its sources read nothing, its operators restore their
// state (the FileSink commits the restored pending files) but produce no end-of-input output
// again, and its subtasks finish as soon as their producers did. A vertex only partly ended
// restores normally: the ended subtasks' readers saved no splits, so nothing is read twice.
//
// Calls that come from the AM (Deploy, Cancel, TriggerCheckpoint, AddSplits,
// NotifyCheckpointComplete) are queued to each subtask's mailbox in the order they are made,
// so a split assigned before a checkpoint was triggered reaches the reader before the barrier.
package exec
