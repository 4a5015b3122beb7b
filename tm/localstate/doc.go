// Package localstate is a TaskManager's local state cache (Flink's local recovery,
// state.backend.local-recovery): copies of checkpoint state files kept on the
// TaskManager's disk so a subtask restarted here restores without downloading them.
//
// # Entries
//
// An Entry holds files of one checkpoint of one vertex's key-group range, under a Key
// (job, vertex, key-group range, checkpoint id). Each file is stored under the name the
// checkpoint's _metadata gives its handle (for example "<job>/chk-7/map-0.state",
// "<job>/chk-7/map-0.db/MANIFEST-000005" or "<job>/shared/map-0-3f2a-000012.sst") with
// its size; the name, not the entry, identifies the bytes.
//
// # Adding files
//
// Whoever has the bytes adds them, atomically per entry:
//
//	st, err := store.Stage(localstate.Key{Job: job, Vertex: v, KeyGroupStart: a, KeyGroupEnd: b, Checkpoint: n})
//	w, err := st.Create(handleName)   // write the bytes of one handle (io.Copy from storage ...)
//	err = w.Close()
//	err = st.Link(otherHandle, path)  // or hard-link (copy if linking fails) a local file
//	err = st.Commit()                 // the entry becomes visible to Find/Lookup; Abort drops it
//
// Put does the same for files that are already on local disk. The subtask that completes
// a checkpoint puts its own files (its state file and, with the pebble backend, its
// database files); the warm-up of issue 14 puts the ranges it fetched for a move ahead of
// time, under the key of the checkpoint it fetched them from. Committing an entry replaces
// an entry with the same Key.
//
// # How a restore picks files
//
// A restore of checkpoint n walks the handles _metadata lists for its vertex and asks
// Find(job, vertex, handleName, size) for each: any committed entry of (job, vertex) that
// holds a file of that name and exactly that size serves it, whatever its checkpoint and
// key-group range (a shared SST of checkpoint 5 is the same bytes when checkpoint 7 lists
// it again). Only handles Find does not serve are downloaded. Files are not fsynced; every
// file's CRC-32C is in its entry's index, and a file of an entry an earlier process wrote
// (a directory reopened) is served only once it matches (checksum.go). Lookup lists the entries
// of a checkpoint that overlap a key-group range, for callers that want to know what is
// warm (the warm-up's lag, logs).
//
// # Garbage collection
//
// Confirm(job, n) is called when the AM confirms checkpoint n complete: every entry of
// the job with a checkpoint id below n is deleted (n's own entries and newer ones, such
// as a warm-up that fetched ahead, stay), as are staging directories left by a crashed
// writer. DropJob deletes everything of a job; Open removes staging leftovers of a
// previous process.
//
// # Ownership
//
// One Store owns its directory at a time (a flock'ed lock file, owner.go). A TaskManager
// opens its store with OpenNew: a fresh directory of its own per process under a root
// shared by all TaskManagers of the host, removing those whose owner is gone. Files are hard-linked where possible, so keeping an entry costs only
// the blocks no newer entry or live database shares.
package localstate
