package am

import (
	"fmt"

	"github.com/tidestream/tide/core"
)

// holdEffect puts a deployment off while a checkpoint is being finalized off the loop:
// the new attempt must restore from that checkpoint if it completes. Once a deployment is
// held, every later effect waits behind it (the job's status, cancellations, releases,
// timers), so everything still happens in the order the core decided. It reports whether
// eff was held (loop goroutine).
func (a *AM) holdEffect(eff core.Effect) bool {
	if len(a.held) == 0 {
		if _, deploy := eff.(core.Deploy); !deploy || a.ckpt.finalizing == 0 {
			return false
		}
		a.log.Info("holding the deployment back until the checkpoint being finalized is settled",
			"effect", effectName(eff), "checkpoint", a.ckpt.finalizing)
	}
	a.held = append(a.held, eff)
	return true
}

// releaseHeld applies the effects holdEffect put off (loop goroutine).
func (a *AM) releaseHeld() {
	held := a.held
	a.held = nil
	for _, eff := range held {
		a.apply(eff)
		a.noteStateEffect(eff)
	}
}

func effectName(eff core.Effect) string {
	switch e := eff.(type) {
	case core.Deploy:
		return fmt.Sprintf("deploy attempt %d", e.Attempt)
	case core.CancelAttempt:
		return fmt.Sprintf("cancel attempt %d", e.Attempt)
	}
	return fmt.Sprintf("%T", eff)
}
