package exec

import (
	"fmt"
	"slices"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/stream"
)

// runScratch is RouteRecords' memory, reused from run to run.
type runScratch struct {
	hashes  []uint64
	kgs     []int32
	targets []int32 // consumer subtask per record
	order   []int32 // record indexes grouped by consumer, in order within each group
	starts  []int32 // where each consumer's group starts in order (one more at the end)
	next    []int32
	run     recordRun
}

// RouteRecords routes a typed output's records (stream.SideRouter). Per edge, each consumer
// gets its records as one run, in their order, under one lock of its output: through the
// buffer's side car when it is in this TaskManager, encoded otherwise.
func (r *router) RouteRecords(recs stream.PendingRecords) error {
	n := recs.Len()
	if n == 0 || len(r.edges) == 0 {
		return nil
	}
	s := &r.runs
	ts := recs.Timestamps()
	s.targets = slices.Grow(s.targets[:0], n)[:n]
	bytes := 0
	for i, e := range r.edges {
		keyed := false
		switch {
		case e.spec.Kind == jobgraph.Hash && (len(e.outs) > 1 || !e.local[0]):
			s.hashes = recs.KeyHashes(i, s.hashes)
			if len(s.hashes) < n {
				return fmt.Errorf("edge to %s is keyed, its records have no key", e.spec.To)
			}
			s.kgs = slices.Grow(s.kgs[:0], n)[:n]
			for j, h := range s.hashes[:n] {
				kg := jobgraph.KeyGroupFor(h, e.maxP)
				s.kgs[j], s.targets[j] = int32(kg), int32(e.target(kg))
			}
			keyed = true
		case e.spec.Kind == jobgraph.Rebalance:
			for j := range n {
				s.targets[j] = int32(e.nextRoundRobin())
			}
		default:
			// FORWARD, or HASH to a single consumer in this TaskManager: a record needs no
			// key group to be routed there, and the keyed operator hashes it on its own
			// goroutine rather than this one (records without a key group in their header).
			clear(s.targets[:n])
		}
		s.group(len(e.outs), n)
		for t, o := range e.outs {
			run := &s.run
			run.reset(recs, s.order[s.starts[t]:s.starts[t+1]])
			if len(run.order) == 0 {
				continue
			}
			for _, j := range run.order {
				if keyed {
					run.heads = appendKeyedRecordHeader(run.heads, ts[j], int(s.kgs[j]))
				} else {
					run.heads = appendRecordHeader(run.heads, ts[j])
				}
				run.hoff = append(run.hoff, int32(len(run.heads)))
			}
			var err error
			if e.local[t] {
				err = o.WriteSides(r.ctx, run)
			} else {
				err = o.WriteRecords(r.ctx, run)
			}
			if err != nil {
				return fmt.Errorf("writing to %s: %w", o.ID(), err)
			}
			bytes += len(run.heads) + run.bodies
		}
	}
	r.sent += int64(n)
	if r.m.on {
		r.m.countOut(n, bytes)
	}
	return nil
}

// group sorts the indexes of n records into order by their consumer (of p), stable.
func (s *runScratch) group(p, n int) {
	s.order = slices.Grow(s.order[:0], n)[:n]
	s.starts = slices.Grow(s.starts[:0], p+1)[:p+1]
	clear(s.starts)
	for _, t := range s.targets[:n] {
		s.starts[t+1]++
	}
	for t := range p {
		s.starts[t+1] += s.starts[t]
	}
	s.next = append(s.next[:0], s.starts[:p]...)
	for j, t := range s.targets[:n] {
		s.order[s.next[t]] = int32(j)
		s.next[t]++
	}
}

// recordRun is the run of records for one consumer: a netplane.SideRun for one in this
// TaskManager, a netplane.RecordRun for one in another.
type recordRun struct {
	recs   stream.PendingRecords
	order  []int32 // the run's records
	heads  []byte  // their headers, one after the other
	hoff   []int32 // where each header starts in heads (one more at the end)
	bodies int     // the bytes of the encodings handed out (Record)
}

func (u *recordRun) reset(recs stream.PendingRecords, order []int32) {
	u.recs, u.order = recs, order
	u.heads, u.hoff, u.bodies = u.heads[:0], append(u.hoff[:0], 0), 0
}

func (u *recordRun) Len() int { return len(u.order) }

func (u *recordRun) Head(k int) []byte { return u.heads[u.hoff[k]:u.hoff[k+1]] }

func (u *recordRun) Heads() ([]byte, []int32) { return u.heads, u.hoff }

func (u *recordRun) AppendRunHead(dst []byte, first, count int) []byte {
	return appendSideRunHead(dst, first, count)
}

func (u *recordRun) AppendSides(side any, from, to int) any {
	return u.recs.AppendSides(side, u.order[from:to])
}

func (u *recordRun) SideBytes() int { return u.recs.SideBytes() }

func (u *recordRun) Record(k int) (head, body []byte) {
	body = u.recs.Encode(int(u.order[k]))
	u.bodies += len(body)
	return u.Head(k), body
}
