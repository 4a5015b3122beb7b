package am

import (
	"context"
	"fmt"

	"github.com/tidestream/tide/core"
)

// Values of execution.checkpointing.externalized-checkpoint-retention (Flink's).
const (
	RetainDeleteOnCancellation = "DELETE_ON_CANCELLATION"
	RetainOnCancellation       = "RETAIN_ON_CANCELLATION"
	RetainNoExternalized       = "NO_EXTERNALIZED_CHECKPOINTS"
)

// discardCheckpoints says whether a job that ended with status loses its checkpoints under
// retention: a finished job always does, a failed one only without externalized
// checkpoints, a cancelled one unless they are retained on cancellation; a suspended job
// (a new attempt may resume it) never does.
func discardCheckpoints(retention string, status core.JobStatus) bool {
	switch status {
	case core.StatusFinished:
		return true
	case core.StatusCanceled:
		return retention != RetainOnCancellation
	case core.StatusFailed:
		return retention == RetainNoExternalized
	}
	return false
}

// pathKeeper is a driver that deletes a directory of its own when the application ends
// (YARN's staging directory, where checkpoints go unless state.checkpoints.dir says
// otherwise): Keep names the checkpoint the retention kept, so that the driver leaves the
// directory that holds it.
type pathKeeper interface{ Keep(path string) }

// applyCheckpointRetention deletes the ended job's checkpoint directory (<dir>/<job-id>) or
// keeps it, as execution.checkpointing.externalized-checkpoint-retention says. When the
// retention keeps checkpoints, it returns the kept latest one's path ("" when none had
// completed) and a sentence naming it (or saying that none had completed); "", "" when they
// were deleted.
func (a *AM) applyCheckpointRetention(ctx context.Context, status core.JobStatus) (kept, note string) {
	if a.cfg.Storage == nil || a.ckpt.store == nil {
		return "", ""
	}
	retention := a.cfg.CheckpointRetention
	if retention == "" {
		retention = RetainDeleteOnCancellation
	}
	dir := a.cfg.Storage.URI() + "/" + a.cfg.JobID
	if discardCheckpoints(retention, status) {
		if err := a.ckpt.store.removeJob(ctx); err != nil {
			a.log.Warn("could not delete the job's checkpoints", "status", status, "retention", retention, "dir", dir, "err", err)
		} else {
			a.log.Info("checkpoints deleted", "status", status, "retention", retention, "dir", dir)
		}
		return "", ""
	}
	if id := a.ckpt.latest(); id != 0 {
		kept = a.ckpt.chkPath(int64(id))
		a.log.Info("checkpoint kept", "status", status, "retention", retention, "checkpoint", id, "path", kept)
	} else {
		a.log.Info("no checkpoint to keep: none had completed", "status", status, "retention", retention, "dir", dir)
	}
	return kept, keptNote(retention, kept)
}

// keptNote is the sentence the job's end carries about the checkpoint its retention keeps
// (path, "" when no checkpoint had completed, so nothing could be kept).
func keptNote(retention, path string) string {
	if path == "" {
		return fmt.Sprintf("no checkpoint had completed, so none is kept (%s): a new run starts from the beginning", retention)
	}
	return fmt.Sprintf("latest checkpoint kept at %s (%s; resume with --fromSavepoint %s)", path, retention, path)
}
