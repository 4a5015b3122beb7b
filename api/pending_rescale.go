package api

import "time"

// PendingRescale is why a rescale the slots or the requirements call for has not happened
// yet ("pending-rescale" of GET /jobs/:jobid; absent when nothing is pending).
type PendingRescale struct {
	// Reason is one of COOLDOWN, STABILIZING, WAITING_FOR_CHECKPOINT,
	// MIN_PARALLELISM_INCREASE_NOT_MET, SLOTS_MISSING, RESOURCES_IN_FLIGHT, RESTARTING.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Until is when the wait ends by itself (Unix milliseconds), 0 when it waits for an
	// event (a checkpoint, more slots).
	Until        int64 `json:"until"`
	MissingSlots int   `json:"missing-slots"`
	// InFlight counts the TaskManagers on their way (requested or adopted).
	InFlight int `json:"in-flight"`
	// Target is the parallelism per vertex id the rescale would deploy.
	Target map[string]int `json:"target,omitempty"`
}

// String is one line for people: the message, and how long until the wait ends.
func (p PendingRescale) String() string {
	s := p.Reason + ": " + p.Message
	if p.Until > 0 {
		s += " (in " + time.Until(time.UnixMilli(p.Until)).Round(100*time.Millisecond).String() + ")"
	}
	return s
}
