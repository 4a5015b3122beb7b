package worker

import (
	"log/slog"
	"regexp"
	"strings"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/localstate"
	"github.com/tidestream/tide/tm/warmup"
)

// warmupsWanted: the AM's configuration turns warm-ups (state.warmup.timeout above 0) or
// standby copies (num.standby.replicas above 0) on. Their copies are only used by a
// restore that reads the local state store, so they turn local recovery on.
func warmupsWanted(conf map[string]string) bool {
	zero := regexp.MustCompile(`^0*(\.0*)?\s*[a-z]*$`)
	for _, key := range []string{warmupTimeoutKey, numStandbyReplicasKey} {
		if v := strings.TrimSpace(conf[key]); v != "" && !zero.MatchString(v) {
			return true
		}
	}
	return false
}

const (
	warmupTimeoutKey      = "state.warmup.timeout"
	numStandbyReplicasKey = "num.standby.replicas"
)

// newFetcher starts the warm-up copies of one registered session: they report to the AM
// through sess. Without a local state store (local recovery off) every copy fails at once:
// nothing would restore from it.
func (w *worker) newFetcher(jobID string, st storage.Storage, local *localstate.Store, ex *exec.Executor, sess *amSession, log *slog.Logger) *warmup.Fetcher {
	return warmup.New(warmup.Config{JobID: jobID, Storage: st, Local: local, Logger: log, Prepare: ex.PrepareRestore, Report: func(p warmup.Progress) {
		msg := &rpc.WarmupProgress{Round: p.Round, Vertex: p.Vertex, KeyGroupStart: int32(p.Start), KeyGroupEnd: int32(p.End),
			CheckpointId: p.Checkpoint, Bytes: p.Bytes}
		if p.Err != nil {
			msg.Error = p.Err.Error()
		}
		_ = sess.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_WarmupProgress{WarmupProgress: msg}})
	}})
}

// warmupRequest converts the AM's request.
func warmupRequest(m *rpc.WarmupRequest) warmup.Request {
	req := warmup.Request{Round: m.GetRound(), Kind: m.GetKind(), Checkpoint: m.GetCheckpointId()}
	for _, r := range m.GetRanges() {
		wr := warmup.Range{Vertex: r.GetVertex(), Start: int(r.GetKeyGroupStart()), End: int(r.GetKeyGroupEnd()), SourceAttempt: r.GetSourceAttempt()}
		for _, s := range r.GetSources() {
			wr.Sources = append(wr.Sources, warmup.Source{Subtask: int(s.GetSubtask()), Start: int(s.GetKeyGroupStart()), End: int(s.GetKeyGroupEnd())})
		}
		req.Ranges = append(req.Ranges, wr)
	}
	return req
}
