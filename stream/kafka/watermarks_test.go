package kafka

import (
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
)

func TestPartitionWatermarks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a, b := topicPartition{"t", 0}, topicPartition{"t", 1}
	w := newPartitionWatermarks(&PartitionWatermarks{MaxOutOfOrderness: 10 * time.Millisecond, IdleTimeout: time.Second})
	steps := []struct {
		name string
		do   func()
		at   time.Time
		want int64
	}{
		{"no partitions", func() {}, t0, stream.MinWatermark},
		{"a silent partition holds it back", func() { w.add(a, t0); w.add(b, t0) }, t0, stream.MinWatermark},
		{"only a has records", func() { w.record(a, 500, t0.Add(100*time.Millisecond)) }, t0.Add(100 * time.Millisecond), stream.MinWatermark},
		{"b idle: a alone", func() {}, t0.Add(time.Second), 489},
		{"both active: the smaller", func() { w.record(b, 300, t0.Add(time.Second)) }, t0.Add(time.Second), 289},
		{"out of order record does not lower it", func() { w.record(b, 100, t0.Add(time.Second)) }, t0.Add(time.Second), 289},
		{"a idle now: b alone", func() { w.record(b, 700, t0.Add(1500*time.Millisecond)) }, t0.Add(2 * time.Second), 689},
		{"a back with an old timestamp", func() { w.record(a, 600, t0.Add(2*time.Second)) }, t0.Add(2 * time.Second), 589},
		{"all idle: no watermark", func() {}, t0.Add(10 * time.Second), stream.MinWatermark},
	}
	for _, s := range steps {
		s.do()
		if got := w.current(s.at); got != s.want {
			t.Fatalf("%s: watermark %d, want %d", s.name, got, s.want)
		}
	}
	if newPartitionWatermarks(nil) != nil {
		t.Fatal("no config must mean no watermarks")
	}
}
