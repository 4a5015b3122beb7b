package exec

import (
	"context"
	"fmt"

	"github.com/tidestream/tide/stream"
)

// runInputs processes the inputs until their data ended (then it ends the input) and keeps
// serving barriers until every producer finished and the subtask may finish.
func (t *task) runInputs(ctx context.Context) error {
	n := len(t.inputs)
	if n == 0 {
		return fmt.Errorf("vertex %q has neither a source nor inputs", t.vertex.ID)
	}
	dataEnded := make([]bool, n)
	wms := make([]int64, n)
	for i := range wms {
		wms[i] = stream.MinWatermark
	}
	nDataEnded := 0
	al := newAligner(n)

	apply := func(step alignStep) error {
		if step.superseded != 0 {
			t.log.Warn("barrier overtook the one being aligned; declining the older", "declined", step.superseded)
			t.e.cfg.Reporter.CheckpointDecline(t.a.id, step.superseded, t.vertex.ID, t.index,
				fmt.Sprintf("a newer barrier arrived while aligning %d", step.superseded))
		}
		if step.aligned != 0 {
			t.metrics.aligned(step.aligned)
			if err := t.checkpoint(ctx, step.aligned, step.ts); err != nil {
				return err
			}
		}
		for _, i := range step.resume {
			t.inputs[i].resume <- struct{}{}
		}
		return nil
	}
	updateWatermark := func() error {
		low := stream.MaxWatermark
		for i := range n {
			if !dataEnded[i] {
				low = min(low, wms[i])
			}
		}
		return t.advanceWatermark(low)
	}
	endData := func(i int) error {
		if dataEnded[i] {
			return nil
		}
		dataEnded[i] = true
		nDataEnded++
		if nDataEnded < n {
			return updateWatermark()
		}
		return t.endInput(ctx)
	}

	for t.closedInputs < n || !t.done() {
		if t.closedInputs == n {
			// Every producer finished: no barrier can come, so the final checkpoint is taken
			// on the AM's trigger (a trigger queued before the last input closed included).
			if tr := t.a.highestTriggered(); tr > t.acked() {
				if err := t.checkpoint(ctx, tr, 0); err != nil {
					return err
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.mail.signal:
				if err := t.handleMail(ctx); err != nil {
					return err
				}
			}
			continue
		}
		ev, mail, err := t.nextEvent(ctx)
		switch {
		case err != nil:
			return err
		case mail:
			if err := t.handleMail(ctx); err != nil {
				return err
			}
		default:
			switch ev.kind {
			case evRecords:
				t.processed += int64(ev.n)
				if t.metrics.on {
					t.metrics.recordsIn.Add(int64(ev.n))
				}
				b := t.pending
				if b.from.keyed {
					err = b.recs.EmitRangeKeyed(ev.rec, ev.rec+ev.n, b.ts, b.kgs, t.head)
				} else {
					err = b.recs.EmitRange(ev.rec, ev.rec+ev.n, b.ts, t.head)
				}
				if err != nil {
					return err
				}
			case evWatermark:
				if ev.ts > wms[ev.input] && !dataEnded[ev.input] {
					wms[ev.input] = ev.ts
					if err := updateWatermark(); err != nil {
						return err
					}
				}
			case evBarrier:
				t.metrics.barrier(ev.id)
				t.a.noteSavepoint(ev.id, ev.sp)
				if err := apply(al.barrier(ev.input, ev.id, ev.ts)); err != nil {
					return err
				}
			case evEndOfData:
				if err := endData(ev.input); err != nil {
					return err
				}
			case evEnd:
				t.closedInputs++
				if err := endData(ev.input); err != nil {
					return err
				}
				if err := apply(al.close(ev.input)); err != nil {
					return err
				}
			case evError:
				return ev.err
			}
		}
	}
	return nil
}

// nextEvent returns the next input event, or mail when the mailbox has calls. The events
// of a batch are returned in order; between batches, an event and mail both ready are
// picked at random, so neither starves the other. Time spent waiting for either counts as
// idle.
func (t *task) nextEvent(ctx context.Context) (ev event, mail bool, err error) {
	if t.pending != nil && t.next < len(t.pending.events) {
		ev = t.pending.events[t.next]
		t.next++
		return ev, false, nil
	}
	if t.pending != nil {
		t.pending.release()
		t.pending, t.next = nil, 0
	}
	// Between batches: what the last one emitted leaves before the subtask may wait.
	if err := t.router.flushStaged(); err != nil {
		return event{}, false, err
	}
	var batch *batch
	select {
	case batch = <-t.events:
	case <-t.mail.signal:
		return event{}, true, nil
	default:
		idle := t.metrics.idleStart()
		select {
		case <-ctx.Done():
			t.metrics.idleSince(idle)
			return event{}, false, ctx.Err()
		case <-t.mail.signal:
			t.metrics.idleSince(idle)
			return event{}, true, nil
		case batch = <-t.events:
			t.metrics.idleSince(idle)
		}
	}
	t.pending, t.next = batch, 1
	return batch.events[0], false, nil
}
