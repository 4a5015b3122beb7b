package stream_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

func TestListState(t *testing.T) {
	for _, backend := range backendTypes {
		t.Run(backend, func(t *testing.T) {
			rt := withBackend(t, backend, runtimeFor("op", 1, 0, 16))
			s, err := stream.NewListState[int64, string](rt, "l", nil, stream.TTLConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			get := func(k int64) []string {
				t.Helper()
				v, err := s.Get(k)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			if got := get(1); got != nil {
				t.Fatalf("new key: %v", got)
			}
			for _, v := range []string{"a", "", "c"} {
				if err := s.Add(1, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.AddAll(1, []string{"d", "e"}); err != nil {
				t.Fatal(err)
			}
			if err := s.AddAll(1, nil); err != nil {
				t.Fatal(err)
			}
			if got := get(1); !slices.Equal(got, []string{"a", "", "c", "d", "e"}) {
				t.Fatalf("after Add and AddAll: %q", got)
			}
			if err := s.Update(1, []string{"x"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Add(1, "y"); err != nil {
				t.Fatal(err)
			}
			if got := get(1); !slices.Equal(got, []string{"x", "y"}) {
				t.Fatalf("after Update and Add: %q", got)
			}
			if err := s.Update(1, nil); err != nil {
				t.Fatal(err)
			}
			if got := get(1); got != nil {
				t.Fatalf("after Update(nil): %q", got)
			}
			if err := s.Add(2, "z"); err != nil {
				t.Fatal(err)
			}
			if err := s.Clear(2); err != nil {
				t.Fatal(err)
			}
			if got := get(2); got != nil {
				t.Fatalf("after Clear: %q", got)
			}
		})
	}
}

func TestListStateTTL(t *testing.T) {
	for _, backend := range backendTypes {
		for _, upd := range []stream.TTLUpdate{stream.TTLOnCreateAndWrite, stream.TTLOnReadAndWrite} {
			t.Run(backend+"/"+upd.String(), func(t *testing.T) {
				now := time.UnixMilli(5_000_000)
				ttl := stream.TTLConfig{TTL: 10 * time.Second, Update: upd, Now: func() time.Time { return now }}
				rt := withBackend(t, backend, runtimeFor("op", 1, 0, 16))
				s, err := stream.NewListState[string, int64](rt, "l", nil, ttl)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.AddAll("k", []int64{1, 2}); err != nil {
					t.Fatal(err)
				}
				now = now.Add(6 * time.Second)
				if err := s.Add("k", 3); err != nil {
					t.Fatal(err)
				}
				if got, _ := s.Get("k"); !slices.Equal(got, []int64{1, 2, 3}) {
					t.Fatalf("6 s after the first adds: %v", got)
				}
				now = now.Add(6 * time.Second) // 1 and 2: 12 s after their add, 6 s after the read
				got, err := s.Get("k")
				if err != nil {
					t.Fatal(err)
				}
				want := []int64{3}
				if upd == stream.TTLOnReadAndWrite {
					want = []int64{1, 2, 3}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("update %d: %v, want %v", upd, got, want)
				}
				// Snapshots leave expired elements out; restore at another parallelism keeps the rest.
				if err := s.Add("k2", 9); err != nil {
					t.Fatal(err)
				}
				now = now.Add(9 * time.Second) // 3 was added 15 s ago (create-and-write: expired); k2's 9 was added 9 s ago
				var w snapshot.Writer
				if err := s.Snapshot(w.Operator("op")); err != nil {
					t.Fatal(err)
				}
				file := w.Encode(snapshot.Header{Vertex: "v", Parallelism: 1, MaxParallelism: 16, KeyGroupEnd: 15, Checkpoint: 1, Attempt: 1})
				all := map[string][]int64{}
				for i := range 3 {
					rt2 := withBackend(t, backend, runtimeFor("op", 3, i, 16))
					s2, err := stream.NewListState[string, int64](rt2, "l", nil, ttl)
					if err != nil {
						t.Fatal(err)
					}
					if err := s2.Restore(restoreFor(t, rt2, [][]byte{file})); err != nil {
						t.Fatal(err)
					}
					for _, k := range []string{"k", "k2"} {
						if rt2.OwnsKeyGroup(stream.KeyGroupOf(k, 16)) {
							v, err := s2.Get(k)
							if err != nil {
								t.Fatal(err)
							}
							all[k] = v
						} else if n := stored(t, rt2, "l"); n > 2 {
							t.Fatalf("subtask %d stores %d lists", i, n)
						}
					}
				}
				wantK := []int64(nil)
				if upd == stream.TTLOnReadAndWrite {
					wantK = []int64{1, 2, 3} // renewed by the read at 12 s: 9 s old
				}
				if !slices.Equal(all["k"], wantK) || !slices.Equal(all["k2"], []int64{9}) {
					t.Fatalf("restored k=%v k2=%v, want k=%v k2=[9]", all["k"], all["k2"], wantK)
				}
			})
		}
	}
}
