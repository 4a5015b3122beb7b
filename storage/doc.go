// Package storage is tide's checkpoint storage: one small interface, Storage, with two
// implementations chosen by the scheme of state.checkpoints.dir:
//
//	file:///var/tide/ckpt           local directory (os package)
//	hdfs://nn:8020/tide/ckpt        HDFS through github.com/colinmarc/hdfs/v2
//	hdfs:///tide/ckpt               namenode from fs.defaultFS in $HADOOP_CONF_DIR/core-site.xml,
//	                                else from $TIDE_HDFS_DEFAULT_FS (set in YARN containers)
//
// Files become visible only when committed:
//
//	Create(name) ──► Writer ──Write──► <dir>/.tide-tmp.<base>.<random>   (never listed)
//	                   │
//	                   ├─Commit──► rename onto <dir>/<base> (replaces an existing file atomically)
//	                   └─Abort───► delete the temporary file
//
// The HDFS writer keeps up to Options.BufferSize bytes in memory and the rest of a bigger file
// in a local spill file (Options.SpillDir), so memory stays bounded and Commit can replay any
// part of the file. A file of up to two blocks goes up as one retryable unit (temporary file,
// close, rename); a namenode restart or a datanode hiccup repeats that upload. A bigger file
// goes up in block-aligned sessions (create or append, write, complete): when one fails, the
// namenode is asked to recover the temporary file's lease, which closes it at the length the
// datanodes acknowledged, and the next session appends from there, so a failure re-sends at
// most about a block; after the namenode refuses a block as not replicated yet, the sessions
// shrink to two blocks, which it cannot refuse (hdfs_upload.go).
//
// Every remote call runs through a retry loop: transient errors (namenode in safe mode,
// connection refused or reset while the namenode restarts, datanode pipeline errors) are retried
// with exponential backoff up to Options.Retry.Attempts and logged with slog; the HDFS client
// is dropped and dialled again after a connection error. Permanent errors (permission denied,
// quota exceeded, unknown namenode host, not found) return at once. All errors are *Error values
// naming the operation and the full URI of the path, and match the sentinels in errors.go with
// errors.Is (ErrNotFound, ErrPermission, ErrQuotaExceeded, ErrNoSuchNamenode, ErrUnavailable, …).
//
// A process killed between Create and Commit leaves its temporary file behind;
// SweepUncommitted deletes those of writers known to be gone (the file sink sweeps the ones of
// older attempts when it restores).
//
// SetLatest / Latest keep an atomic "latest checkpoint" pointer: a small file written with the
// same temporary-name-then-rename commit, so readers see the old value or the new one, never a
// partial one. The conformance suite in storage/storagetest runs against both implementations.
package storage
