package exec

import (
	"context"
	"fmt"

	"github.com/tidestream/tide/stream"
)

// alignment tracks the barrier being aligned.
type alignment struct {
	id        int64 // 0: none
	ts        int64
	delivered []bool
}

// runInputs processes the inputs until every one has ended.
func (t *task) runInputs(ctx context.Context) error {
	n := len(t.inputs)
	if n == 0 {
		return fmt.Errorf("vertex %q has neither a source nor inputs", t.vertex.ID)
	}
	ended := make([]bool, n)
	wms := make([]int64, n)
	for i := range wms {
		wms[i] = stream.MinWatermark
	}
	nEnded := 0
	al := alignment{delivered: make([]bool, n)}

	checkAligned := func() error {
		if al.id == 0 {
			return nil
		}
		for i := range n {
			if !al.delivered[i] && !ended[i] {
				return nil
			}
		}
		id := al.id
		if err := t.checkpoint(ctx, id, al.ts); err != nil {
			return err
		}
		al.id = 0
		for i := range n {
			if al.delivered[i] {
				al.delivered[i] = false
				if !ended[i] {
					t.inputs[i].resume <- struct{}{}
				}
			}
		}
		return nil
	}
	updateWatermark := func() error {
		low := stream.MaxWatermark
		for i := range n {
			if !ended[i] {
				low = min(low, wms[i])
			}
		}
		return t.advanceWatermark(low)
	}

	for nEnded < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.mail.signal:
			if err := t.handleMail(ctx); err != nil {
				return err
			}
		case ev := <-t.events:
			switch ev.kind {
			case evRecord:
				t.processed++
				if err := t.head.Collect(ev.v, ev.ts); err != nil {
					return err
				}
			case evWatermark:
				if ev.ts > wms[ev.input] {
					wms[ev.input] = ev.ts
					if err := updateWatermark(); err != nil {
						return err
					}
				}
			case evBarrier:
				switch {
				case al.id == 0 || ev.id > al.id:
					if al.id != 0 {
						t.log.Warn("barrier overtook the one being aligned; declining the older", "aligning", al.id, "barrier", ev.id)
						t.e.cfg.Reporter.CheckpointDecline(t.a.id, al.id, t.vertex.ID, t.index, fmt.Sprintf("barrier %d arrived while aligning %d", ev.id, al.id))
						for i := range n {
							if al.delivered[i] {
								al.delivered[i] = false
								t.inputs[i].resume <- struct{}{}
							}
						}
					}
					al.id, al.ts = ev.id, ev.ts
					al.delivered[ev.input] = true
				case ev.id == al.id:
					al.delivered[ev.input] = true
				default: // an older barrier than the one aligning: already superseded
					t.inputs[ev.input].resume <- struct{}{}
					continue
				}
				if err := checkAligned(); err != nil {
					return err
				}
			case evEnd:
				ended[ev.input] = true
				nEnded++
				if err := checkAligned(); err != nil {
					return err
				}
				if err := updateWatermark(); err != nil {
					return err
				}
			case evError:
				return ev.err
			}
		}
	}
	return t.handleMail(ctx)
}
