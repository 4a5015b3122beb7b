// Package checkpoint is the pure checkpoint coordinator of the core: it decides when a
// checkpoint may start, tracks which subtasks still owe an acknowledgement, declares a
// checkpoint complete, failed or timed out, picks old checkpoints to delete, keeps the
// statistics the REST API shows, and models the _metadata file and the directory layout.
// The AM does every read and write through the storage package; this package only decides.
//
//	Trigger(now, attempt, expected) ──► pending ──Ack×N──► Completed ──► AM writes _metadata
//	      │ min-pause, one at a time      │                                 │
//	      ▼                               ├─ Decline ──► Failed             ▼
//	  ErrInFlight / ErrMinPause           ├─ Timeout(now) ──► Failed    Finalized(now, id)
//	                                      └─ new attempt ──► Failed       → ids to delete
//	                                                                        (num-retained)
//
// Layout under state.checkpoints.dir: <job-id>/chk-<n>/ holds the state files and
// _metadata, written last; a checkpoint counts only once _metadata exists.
package checkpoint
