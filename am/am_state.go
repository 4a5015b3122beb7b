package am

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/checkpoint"
)

// amStateFile holds what the AM knows beyond the checkpoints and must survive a failover:
// the operator's blocklist, the rescale and exception histories, the checkpoint counters
// and the job's start time. It lives beside the checkpoints, <dir>/<job-id>/_am_state;
// checkpoint recovery ignores it (it is not a chk-<n> directory).
const amStateFile = "_am_state"

// amStateVersion is the format of amStateFile this AM writes and reads.
const amStateVersion = 1

// amState is the content of amStateFile (JSON). Times are absolute, so a blocked node's
// end stays where the operator put it, whenever the next attempt reads it.
type amState struct {
	Version     int                     `json:"version"`
	JobID       string                  `json:"job_id"`
	StartTime   time.Time               `json:"start_time"`
	Blocklist   []blocklist.BlockedNode `json:"blocklist"`
	Rescales    []core.Rescale          `json:"rescales"`
	Exceptions  []core.ExceptionEntry   `json:"exceptions"`
	Checkpoints checkpoint.Stats        `json:"checkpoints"`
	// Deployment is the deployment running when the state was written (nil: none), for
	// the next AM attempt to adopt after a failover.
	Deployment *persistedDeployment `json:"deployment,omitempty"`
	// Savepoints are the canonical savepoint directories that may hold a partial
	// savepoint (checkpoint_savepoint_lost.go).
	Savepoints []persistedSavepoint `json:"savepoints,omitempty"`
}

// ErrAMState is wrapped by every refusal of a persisted AM state.
var ErrAMState = errors.New("invalid persisted AM state")

func encodeAMState(s amState) ([]byte, error) {
	s.Version = amStateVersion
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode AM state of job %s: %w", s.JobID, err)
	}
	return data, nil
}

// decodeAMState parses amStateFile of job jobID; name is the file's URI, for errors.
func decodeAMState(data []byte, jobID, name string) (amState, error) {
	var s amState
	if err := json.Unmarshal(data, &s); err != nil {
		return amState{}, fmt.Errorf("%s: %w: %w", name, ErrAMState, err)
	}
	var problems []error
	if s.Version != amStateVersion {
		problems = append(problems, fmt.Errorf("version %d: this AM reads version %d", s.Version, amStateVersion))
	}
	if s.JobID != jobID {
		problems = append(problems, fmt.Errorf("job_id %q: expected %q", s.JobID, jobID))
	}
	if s.StartTime.IsZero() {
		problems = append(problems, errors.New("start_time missing"))
	}
	for i, n := range s.Blocklist {
		if n.ID == "" || !n.Action.Valid() || n.Start.IsZero() {
			problems = append(problems, fmt.Errorf("blocklist[%d] (node %q): expected a node id, an action (%s or %s) and a start time",
				i, n.ID, blocklist.MarkBlocked, blocklist.MarkBlockedAndEvacuate))
		}
	}
	if len(problems) > 0 {
		return amState{}, fmt.Errorf("%s: %w: %w", name, ErrAMState, errors.Join(problems...))
	}
	return s, nil
}
