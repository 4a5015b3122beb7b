package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
)

// gotRecord is a record as a consumer read it.
type gotRecord struct {
	w    examples.WordCount
	ts   int64
	kg   int32
	side bool
}

// captureCollector keeps the records a batch emits.
type captureCollector struct{ got []examples.WordCount }

func (c *captureCollector) Collect(v any, _ int64) error {
	c.got = append(c.got, v.(examples.WordCount))
	return nil
}

// TestRouteRecordsInRuns routes WordCount's words from the chain's typed output to three
// keyed consumers, two on the producer's plane and one on another, in runs of up to 64
// records and with flushes in between: every consumer gets exactly the words of its key
// groups, in the order they were emitted, with their timestamps and key groups; the
// consumers on the same plane get them in side cars, the other encoded. Nothing leaves
// before the run is full or flushed.
func TestRouteRecordsInRuns(t *testing.T) {
	ctx := t.Context()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := netplane.Options{BufferBytes: 512, CreditsPerChannel: 2, FlushInterval: time.Millisecond, Logger: quiet}
	here, err := netplane.Listen(ctx, "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { here.Close() })
	there, err := netplane.Listen(ctx, "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { there.Close() })

	job, err := examples.BuildWordCount([]string{"--input", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	src, err := job.Vertex("lines")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := job.Vertex("count")
	if err != nil {
		t.Fatal(err)
	}
	const p, maxP = 3, 128
	e := &edgeOut{spec: src.Outputs[0], p: p, maxP: maxP}
	var ins []*netplane.Input
	for k, plane := range []*netplane.Plane{here, there, here} {
		id := netplane.ChannelID{Attempt: 1, Edge: "lines->count", Producer: 0, Consumer: k}
		ins = append(ins, plane.OpenInput(id))
		o, err := here.OpenOutput(ctx, id, plane.Addr())
		if err != nil {
			t.Fatal(err)
		}
		e.outs, e.local = append(e.outs, o), append(e.local, o.Local())
	}
	if !e.local[0] || e.local[1] || !e.local[2] {
		t.Fatalf("local consumers %v, want [true false true]", e.local)
	}
	r := &router{ctx: ctx, edges: []*edgeOut{e}, m: &taskMetrics{}}
	r.setBufferTimeout(time.Millisecond)
	r.stageLimit = 64
	out := src.OutputCollector(r)
	staged, ok := out.(stream.StagedCollector)
	if !ok {
		t.Fatalf("the output collector of a value type is a %T, no StagedCollector", out)
	}
	r.stage = staged

	// The consumers read as the records come (each channel has two buffers' credit).
	var results []chan readResult
	for _, in := range ins {
		res := make(chan readResult, 1)
		results = append(results, res)
		go func() {
			got, err := readAll(ctx, in, dst.Inputs[0].NewBatch())
			res <- readResult{got, err}
		}()
	}

	// What each consumer should get, in order.
	want := make([][]gotRecord, p)
	const words = 1000
	for i := range words {
		w := examples.WordCount{Word: fmt.Sprintf("w%d", i%37), Count: int64(i)}
		kg := jobgraph.KeyGroupFor(src.Outputs[0].KeyHash(w), maxP)
		k := jobgraph.OperatorIndexFor(kg, maxP, p)
		want[k] = append(want[k], gotRecord{w: w, ts: int64(i), kg: int32(kg), side: e.local[k]})
		if err := out.Collect(w, int64(i)); err != nil {
			t.Fatal(err)
		}
		if i == 99 {
			if r.sent != 64 {
				t.Fatalf("%d records routed after 100 with runs of 64, want 64", r.sent)
			}
			if err := r.flushStaged(); err != nil {
				t.Fatal(err)
			}
			if r.sent != 100 {
				t.Fatalf("%d records routed after a flush, want 100", r.sent)
			}
		}
	}
	if err := r.close(ctx); err != nil { // flushes what is held back
		t.Fatal(err)
	}
	if r.sent != words {
		t.Fatalf("%d records routed, want %d", r.sent, words)
	}

	for k, res := range results {
		r := <-res
		if r.err != nil {
			t.Fatalf("consumer %d: %v", k, r.err)
		}
		got := r.got
		if len(got) != len(want[k]) {
			t.Fatalf("consumer %d got %d records, want %d", k, len(got), len(want[k]))
		}
		for j := range got {
			if got[j] != want[k][j] {
				t.Fatalf("consumer %d, record %d: got %+v, want %+v", k, j, got[j], want[k][j])
			}
		}
	}
}

type readResult struct {
	got []gotRecord
	err error
}

// readAll reads every record of in until the producer closed it.
func readAll(ctx context.Context, in *netplane.Input, batch stream.RecordBatch) ([]gotRecord, error) {
	var got []gotRecord
	c := &captureCollector{}
	var ferr error
	for {
		err := in.ReadRecords(ctx, func(rec []byte, side any) bool {
			m, err := parseMessage(rec)
			if err == nil && m.tag == tagSideRun {
				err = readSideRun(m, side, batch, c, &got)
			} else if err == nil {
				var i int
				if i, err = batch.Decode(m.payload); err == nil {
					err = batch.Emit(i, m.ts, c)
				}
				if err == nil {
					got = append(got, gotRecord{w: c.got[len(c.got)-1], ts: m.ts, kg: m.kg})
				}
			}
			if err != nil {
				ferr = fmt.Errorf("record %d: %w", len(got), err)
				return false
			}
			return true
		})
		switch {
		case ferr != nil:
			return got, ferr
		case errors.Is(err, io.EOF):
			return got, nil
		case err != nil:
			return got, err
		}
	}
}

// readSideRun reads the records of side-car run m as the input does (takeSideRun): their
// values from side, their timestamps and key groups from their headers.
func readSideRun(m message, side any, recs stream.RecordBatch, c *captureCollector, got *[]gotRecord) error {
	b := &batch{recs: recs, from: &inputChan{keyed: true}}
	if err := b.from.takeSideRun(b, m, side); err != nil {
		return err
	}
	first := b.events[0].rec
	for k := range m.n {
		if err := recs.Emit(first+k, b.ts[k], c); err != nil {
			return err
		}
		*got = append(*got, gotRecord{w: c.got[len(c.got)-1], ts: b.ts[k], kg: b.kgs[k], side: true})
	}
	return nil
}

// TestStageLimitFollowsBufferTimeout: with a buffer timeout of 0 every record leaves at
// once; with any other, records are held back in runs.
func TestStageLimitFollowsBufferTimeout(t *testing.T) {
	r := &router{}
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {-1, stageRecords}, {time.Millisecond, stageRecords}, {100 * time.Millisecond, stageRecords}} {
		r.setBufferTimeout(c.d)
		if got := r.StageLimit(); got != c.want {
			t.Errorf("buffer timeout %v: stage limit %d, want %d", c.d, got, c.want)
		}
	}
}
