package exec_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/stream"
)

// hookSource is a one-split source whose reader generates its own watermark
// (stream.WatermarkReader) and ends only after a checkpoint completed
// (stream.ReaderCheckpointListener), as the Kafka reader does per partition.
type hookSource struct {
	completed *atomic.Int64
}

func (s hookSource) CreateEnumerator(restored []byte, _ int) (stream.SplitEnumerator, error) {
	return stream.NewQueueEnumerator([]stream.Split{{ID: "only"}}, restored)
}

func (s hookSource) CreateReader(rc stream.ReaderContext) (stream.SourceReader, error) {
	return &hookReader{rc: rc, completed: s.completed}, nil
}

type hookReader struct {
	rc        stream.ReaderContext
	completed *atomic.Int64
	split     bool
	noMore    bool
	emitted   int
}

const hookRecords = 5

func (r *hookReader) Start(context.Context) error { r.rc.RequestSplit(); return nil }
func (r *hookReader) AddSplits(s []stream.Split)  { r.split = r.split || len(s) > 0 }
func (r *hookReader) NotifyNoMoreSplits()         { r.noMore = true }
func (r *hookReader) Close() error                { return nil }
func (r *hookReader) ReaderWatermark() int64      { return int64(r.emitted)*1000 - 1 }
func (r *hookReader) SnapshotState(int64) ([]stream.Split, error) {
	if r.split {
		return []stream.Split{{ID: "only"}}, nil
	}
	return nil, nil
}

func (r *hookReader) NotifyCheckpointComplete(_ context.Context, id int64) error {
	r.completed.Store(id)
	return nil
}

func (r *hookReader) Poll(_ context.Context, out stream.Collector) (stream.InputStatus, error) {
	if !r.split {
		return stream.NothingAvailable, nil
	}
	if r.emitted < hookRecords {
		r.emitted++
		return stream.MoreAvailable, out.Collect(int64(r.emitted), int64(r.emitted)*1000)
	}
	if r.completed.Load() == 0 {
		return stream.NothingAvailable, nil
	}
	return stream.EndOfInput, nil
}

// watermarkLog is a sink that records the watermarks reaching it.
type watermarkLog struct {
	stream.BaseOperator
	mu  *sync.Mutex
	wms *[]int64
}

func (o *watermarkLog) Process(any, int64, stream.Collector) error { return nil }
func (o *watermarkLog) Watermark(wm int64, _ stream.Collector) error {
	o.mu.Lock()
	*o.wms = append(*o.wms, wm)
	o.mu.Unlock()
	return nil
}

// TestReaderWatermarksAndCheckpointListener: the runtime emits the reader's own watermark
// (not the strategy's, which has none) downstream, and tells the reader when a checkpoint
// completed.
func TestReaderWatermarksAndCheckpointListener(t *testing.T) {
	var completed atomic.Int64
	var mu sync.Mutex
	var wms []int64
	job := stream.NewJob("hooks", 1, 0)
	src := stream.FromSource(job, "src", hookSource{completed: &completed}, stream.NoWatermarks[int64]())
	stream.Sink(stream.Rebalance(src, "spread"), "log", func() stream.Operator { return &watermarkLog{mu: &mu, wms: &wms} })

	am := newFakeAM(t, job, 1)
	am.checkpointing = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go am.run(ctx, 40*time.Millisecond)
	am.deploy(1)
	am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })

	if completed.Load() == 0 {
		t.Fatal("the reader was never told a checkpoint completed")
	}
	mu.Lock()
	defer mu.Unlock()
	// The strategy (NoWatermarks) has none before the end of input: any other watermark
	// downstream is the reader's, k*1000-1 after k records.
	readers := slices.DeleteFunc(slices.Clone(wms), func(wm int64) bool { return wm == stream.MaxWatermark })
	if len(readers) == 0 {
		t.Fatalf("watermarks downstream %v: none from the reader", wms)
	}
	for _, wm := range readers {
		if wm%1000 != 999 || wm > int64(hookRecords)*1000 {
			t.Fatalf("watermark %d downstream is not one the reader generated (%v)", wm, wms)
		}
	}
	if wms[len(wms)-1] != stream.MaxWatermark {
		t.Fatalf("last watermark %d, want the end of input", wms[len(wms)-1])
	}
}
