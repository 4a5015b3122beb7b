package netplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestMeshWithConcurrentRelease runs an all-to-all shuffle between three
// planes for two attempts at once and releases one of them mid-stream: the
// surviving attempt delivers every record in order, every end of the released
// one returns an error, and nothing hangs or leaks.
func TestMeshWithConcurrentRelease(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			ctx := testCtx(t)
			opts := Options{BufferBytes: 512, CreditsPerChannel: 2, FlushInterval: -1}
			planes := []*Plane{newTestPlane(t, opts), newTestPlane(t, opts), newTestPlane(t, opts)}
			const keep, drop = 1, 2
			rng := rand.New(rand.NewPCG(seed, 42))
			var wg sync.WaitGroup
			errc := make(chan error, 256)
			var dropStarted sync.WaitGroup
			for _, attempt := range []int64{keep, drop} {
				for pi, from := range planes {
					for ci, to := range planes {
						id := ChannelID{Attempt: attempt, Edge: "map->reduce", Producer: pi, Consumer: ci}
						records := 200 + rng.IntN(300)
						sizes := rng.IntN(700) + 1 // some records exceed a buffer
						in := to.OpenInput(id)
						if attempt == drop {
							dropStarted.Add(1)
						}
						wg.Add(2)
						go func() {
							defer wg.Done()
							started := attempt != drop
							defer func() {
								if !started {
									dropStarted.Done()
								}
							}()
							out, err := from.OpenOutput(ctx, id, to.Addr())
							if err != nil {
								if attempt == drop && errors.Is(err, ErrReleased) {
									return
								}
								errc <- err
								return
							}
							for n := 0; attempt == drop || n < records; n++ {
								if err := out.Write(ctx, record(n, n%sizes)); err != nil {
									if attempt == drop && (errors.Is(err, ErrReleased) || errors.Is(err, ErrChannelReset)) {
										return
									}
									errc <- fmt.Errorf("write %s: %w", id, err)
									return
								}
								if !started && n == 50 {
									started = true
									dropStarted.Done()
								}
							}
							if err := out.Close(ctx); err != nil {
								errc <- fmt.Errorf("close %s: %w", id, err)
							}
						}()
						go func() {
							defer wg.Done()
							for n := 0; ; n++ {
								got, err := in.Next(ctx)
								if attempt == drop {
									if err != nil {
										if !errors.Is(err, ErrReleased) && !errors.Is(err, ErrChannelReset) {
											errc <- fmt.Errorf("released %s: %w", id, err)
										}
										return
									}
									continue
								}
								if errors.Is(err, io.EOF) && n == records {
									return
								}
								if err != nil {
									errc <- fmt.Errorf("read %s record %d of %d: %w", id, n, records, err)
									return
								}
								if !bytes.Equal(got, record(n, n%sizes)) {
									errc <- fmt.Errorf("read %s: record %d corrupt or out of order", id, n)
									return
								}
							}
						}()
					}
				}
			}
			dropStarted.Wait()
			for _, k := range rng.Perm(len(planes)) {
				planes[k].ReleaseAttempt(drop)
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Error(err)
			}
			for _, p := range planes {
				if got := p.BufferedBytes(); got != 0 {
					t.Errorf("plane %s still buffers %d bytes", p.Addr(), got)
				}
			}
		})
	}
}
