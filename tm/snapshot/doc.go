// Package snapshot is the self-describing format of one subtask's state file in a
// checkpoint (<jobID>/chk-<n>/<vertex>-<subtask>.state), and the logic that assembles a
// subtask's restore view from the files of a vertex written at any parallelism.
//
//	"TIDESNAP" | version | header length | header | data blocks
//	header: vertex, subtask, parallelism, maxParallelism, key-group range, checkpoint, attempt,
//	        flags (v2: ended input), per operator: keyed states (per key group: offset, length) and list states
//	data:   keyed block = (key, value)*   list block = (id, data)*   (length-prefixed)
//
// Keyed state is stored per key group with an offset index in the header, so a subtask that
// restores at another parallelism reads only the blocks of the key groups it now owns (it
// seeks past the others). List state (source splits, sink commits) is redistributed round
// robin over sorted ids, or given to every subtask (union).
//
// A file written after its subtask's input ended carries the EndedInput flag. When every
// subtask of a vertex had ended its input in a checkpoint, Restore.VertexEnded reports it and
// the restored subtasks must not produce their end-of-input output again (Flink's
// "finished on restore").
package snapshot
