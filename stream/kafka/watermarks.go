package kafka

import (
	"time"

	"github.com/tidestream/tide/stream"
)

// partitionWatermarks keeps one watermark per partition of a reader: the largest timestamp
// read from it minus the allowed out-of-orderness. The reader's watermark is the smallest
// over the partitions that are not idle; a partition is idle once IdleTimeout passed
// without a record from it (a partition that never had a record holds the watermark back
// until then).
type partitionWatermarks struct {
	cfg   PartitionWatermarks
	parts map[topicPartition]*partitionClock
}

type partitionClock struct {
	maxTs      int64
	lastRecord time.Time
}

func newPartitionWatermarks(cfg *PartitionWatermarks) *partitionWatermarks {
	if cfg == nil {
		return nil
	}
	return &partitionWatermarks{cfg: *cfg, parts: map[topicPartition]*partitionClock{}}
}

// add registers a partition (now counts as its last activity).
func (w *partitionWatermarks) add(tp topicPartition, now time.Time) {
	if _, ok := w.parts[tp]; !ok {
		w.parts[tp] = &partitionClock{maxTs: stream.MinWatermark, lastRecord: now}
	}
}

// record notes a record's timestamp (milliseconds) read from tp.
func (w *partitionWatermarks) record(tp topicPartition, ts int64, now time.Time) {
	c, ok := w.parts[tp]
	if !ok {
		c = &partitionClock{maxTs: stream.MinWatermark}
		w.parts[tp] = c
	}
	c.lastRecord = now
	if ts > c.maxTs {
		c.maxTs = ts
	}
}

// current is the reader's watermark at now (MinWatermark while a live partition has none).
func (w *partitionWatermarks) current(now time.Time) int64 {
	wm, live := stream.MaxWatermark, false
	for _, c := range w.parts {
		if w.cfg.IdleTimeout > 0 && now.Sub(c.lastRecord) >= w.cfg.IdleTimeout {
			continue
		}
		live = true
		pw := stream.MinWatermark
		if c.maxTs != stream.MinWatermark {
			pw = c.maxTs - w.cfg.MaxOutOfOrderness.Milliseconds() - 1
		}
		wm = min(wm, pw)
	}
	if !live {
		// Every partition is idle (or there are none): hold the watermark where it is.
		return stream.MinWatermark
	}
	return wm
}
