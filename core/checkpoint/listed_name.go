package checkpoint

import (
	"path"
	"strings"
)

// ListedName maps a file name the _metadata of checkpoint md lists to its name in the
// storage holding the checkpoint's directory dir (relative to that storage's root).
// Subtasks list names relative to the root of the checkpoint storage they wrote to:
// <job>/chk-<n>/<file> for a checkpoint's own files, <job>/shared/<file> for the tables
// of incremental checkpoints, kept once for the job beside its chk-<n> directories.
//
// The checkpoint is either in place, where its job wrote it (dir is <job>/chk-<n> of the
// storage root: a job restoring its own checkpoint, or a retained checkpoint resumed
// with --fromSavepoint), and its shared files are the job's <job>/shared/ as listed; or a
// copy elsewhere (a savepoint), which holds its own files in dir and the shared files
// copied to <dir>/shared/. Other names are relative to dir.
func ListedName(md Metadata, dir, name string) string {
	if rest, ok := strings.CutPrefix(name, md.JobID+"/shared/"); ok {
		if dir == ChkDir(md.JobID, md.CheckpointID) {
			return name
		}
		return path.Join(dir, "shared", rest)
	}
	if rest, ok := strings.CutPrefix(name, ChkDir(md.JobID, md.CheckpointID)+"/"); ok {
		name = rest
	}
	return path.Join(dir, name)
}
