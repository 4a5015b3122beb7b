package coretest

import (
	"fmt"
	"strings"
	"time"

	"github.com/tidestream/tide/core"
)

// FormatEffect renders one effect as one line for golden files; times are shown
// relative to Epoch.
func FormatEffect(eff core.Effect) string {
	switch e := eff.(type) {
	case core.StartTimer:
		return fmt.Sprintf("timer %d %s after=%v v=%d", e.Timer, e.Kind, e.After, e.Version)
	case core.Deploy:
		var b strings.Builder
		verb := "deploy"
		if e.Adopted {
			verb = "adopt"
		}
		fmt.Fprintf(&b, "%s attempt=%d restore=%d", verb, e.Attempt, e.RestoreFrom)
		for _, v := range e.Vertices {
			fmt.Fprintf(&b, " %s=%d/%d", v.Vertex, v.Parallelism, v.MaxParallelism)
		}
		b.WriteString(" slots:")
		for _, sa := range e.Slots {
			names := make([]string, len(sa.Subtasks))
			for i, st := range sa.Subtasks {
				names[i] = st.String()
			}
			fmt.Fprintf(&b, " %s[%s]", sa.Slot, strings.Join(names, ","))
		}
		return b.String()
	case core.CancelAttempt:
		return fmt.Sprintf("cancel-attempt %d (%s)", e.Attempt, e.Reason)
	case core.RejectTaskManager:
		return fmt.Sprintf("reject %s (%s)", e.TaskManager, e.Reason)
	case core.ReleaseTaskManager:
		if e.KeepProcess {
			return fmt.Sprintf("drop connection of %s, process kept (%s)", e.TaskManager, e.Reason)
		}
		return fmt.Sprintf("release %s (%s)", e.TaskManager, e.Reason)
	case core.DeclareResources:
		if e.Unbounded {
			return fmt.Sprintf("declare slots=%d unbounded", e.Slots)
		}
		return fmt.Sprintf("declare slots=%d", e.Slots)
	case core.RequestWorkers:
		return fmt.Sprintf("request-workers %d", e.Count)
	case core.JobStatusChanged:
		return fmt.Sprintf("status %s -> %s (%s)", e.From, e.To, e.Cause)
	case core.JobTerminated:
		return fmt.Sprintf("terminated %s (%s)", e.Status, e.Cause)
	case core.BlocklistChanged:
		parts := []string{"blocklist"}
		for _, n := range e.Blocked {
			parts = append(parts, fmt.Sprintf("[%s %s %s %q]", n.ID, n.Action, formatEnd(n.End), n.Cause))
		}
		return strings.Join(parts, " ")
	case core.RescaleRecorded:
		return FormatRescale(e.Rescale)
	case core.WarmUp:
		var b strings.Builder
		fmt.Fprintf(&b, "warmup round=%d %s checkpoint=%d:", e.Round, e.Kind, e.Checkpoint)
		for _, t := range e.Tasks {
			fmt.Fprintf(&b, " %s#%d[%s]->%s", t.Vertex, t.Subtask, t.KeyGroups, t.TaskManager)
		}
		return b.String()
	case core.StopWarmup:
		return fmt.Sprintf("stop-warmup round=%d (%s)", e.Round, e.Reason)
	case core.CancelReported:
		return fmt.Sprintf("cancel-reported %s attempt=%d run=%s (%s)", e.TaskManager, e.Attempt, e.Run, e.Reason)
	}
	return fmt.Sprintf("%T %+v", eff, eff)
}

func formatEnd(end time.Time) string {
	if end.IsZero() {
		return "forever"
	}
	return "until=+" + end.Sub(Epoch).String()
}

// FormatRescale renders a rescale record on one line.
func FormatRescale(r core.Rescale) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rescale #%d %s %s attempt=%d took=%v", r.ID, r.Trigger, r.Outcome, r.Attempt, r.Duration())
	for _, v := range r.Vertices {
		fmt.Fprintf(&b, " %s:%d->%d", v.Vertex, v.Before, v.After)
	}
	if r.KeyGroupsMoved > 0 {
		fmt.Fprintf(&b, " keygroups-moved=%d", r.KeyGroupsMoved)
	}
	if w := r.Warmup; w != nil {
		fmt.Fprintf(&b, " warmup=%v planned=%d ready=%d failed=%d skipped=%d bytes=%d", w.Duration, w.Planned, w.Ready, w.Failed, w.Skipped, w.Bytes)
		if w.TimedOut {
			b.WriteString(" timed-out")
		}
	}
	b.WriteString(" states:")
	for _, s := range r.States {
		fmt.Fprintf(&b, " %s=%v", s.State, s.Leave.Sub(s.Enter))
	}
	return b.String()
}

// FormatPending renders a pending rescale for golden files (times relative to Epoch).
func FormatPending(p core.PendingRescale) string {
	if p.Reason == core.PendingNone {
		return "none\n"
	}
	out := string(p.Reason)
	if !p.Until.IsZero() {
		out += fmt.Sprintf(" until=+%v", p.Until.Sub(Epoch))
	}
	if p.MissingSlots > 0 {
		out += fmt.Sprintf(" missing=%d", p.MissingSlots)
	}
	if p.InFlight > 0 {
		out += fmt.Sprintf(" in-flight=%d", p.InFlight)
	}
	if p.Target != nil {
		keys := sortedKeys(p.Target)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%d", k, p.Target[k])
		}
		out += " target=[" + strings.Join(parts, " ") + "]"
	}
	return out + "\n"
}
