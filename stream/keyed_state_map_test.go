package stream_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// stored counts the entries the backend holds for an operator's state.
func stored(t *testing.T, rt stream.Runtime, name string) int {
	t.Helper()
	n := 0
	if err := rt.KeyedBackend.Iterate(stream.BackendStateName(rt.OperatorID, name), 0, rt.MaxParallelism-1, func(int, []byte, []byte) error {
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func mapEntries(t *testing.T, s *stream.MapState[string, string, int64], k string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	if err := s.Entries(k, func(uk string, v int64) bool {
		got[uk] = v
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMapState(t *testing.T) {
	for _, backend := range backendTypes {
		t.Run(backend, func(t *testing.T) {
			rt := withBackend(t, backend, runtimeFor("op", 1, 0, 16))
			s, err := stream.NewMapState[string, string, int64](rt, "m", nil, stream.TTLConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if empty, err := s.IsEmpty("a"); err != nil || !empty {
				t.Fatalf("IsEmpty of a new key: %v %v", empty, err)
			}
			if err := s.PutAll("a", map[string]int64{"x": 1, "y": 2, "z": 3}); err != nil {
				t.Fatal(err)
			}
			if err := s.Put("ab", "x", 10); err != nil { // "a" prefixes "ab": must stay apart
				t.Fatal(err)
			}
			if v, ok, err := s.Get("a", "y"); err != nil || !ok || v != 2 {
				t.Fatalf("Get(a, y) = %d %v %v", v, ok, err)
			}
			if _, ok, err := s.Get("a", "w"); err != nil || ok {
				t.Fatalf("Get(a, w) of a missing user key: %v %v", ok, err)
			}
			if ok, err := s.Contains("a", "z"); err != nil || !ok {
				t.Fatalf("Contains(a, z) = %v %v", ok, err)
			}
			if err := s.Remove("a", "z"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Contains("a", "z"); ok {
				t.Fatal("removed user key still there")
			}
			if got := mapEntries(t, s, "a"); !maps.Equal(got, map[string]int64{"x": 1, "y": 2}) {
				t.Fatalf("Entries(a) = %v", got)
			}
			var keys []string
			var vals []int64
			if err := s.Keys("a", func(uk string) bool { keys = append(keys, uk); return true }); err != nil {
				t.Fatal(err)
			}
			if err := s.Values("a", func(v int64) bool { vals = append(vals, v); return true }); err != nil {
				t.Fatal(err)
			}
			slices.Sort(keys)
			slices.Sort(vals)
			if !slices.Equal(keys, []string{"x", "y"}) || !slices.Equal(vals, []int64{1, 2}) {
				t.Fatalf("Keys %v Values %v", keys, vals)
			}
			n := 0
			if err := s.Entries("a", func(string, int64) bool { n++; return false }); err != nil || n != 1 {
				t.Fatalf("Entries stopping after the first: %d calls, %v", n, err)
			}
			if err := s.Clear("a"); err != nil {
				t.Fatal(err)
			}
			if empty, _ := s.IsEmpty("a"); !empty {
				t.Fatal("a not empty after Clear")
			}
			if got := mapEntries(t, s, "ab"); !maps.Equal(got, map[string]int64{"x": 10}) {
				t.Fatalf("Clear(a) changed ab: %v", got)
			}
		})
	}
}

func TestMapStateTTL(t *testing.T) {
	for _, backend := range backendTypes {
		for _, upd := range []stream.TTLUpdate{stream.TTLOnCreateAndWrite, stream.TTLOnReadAndWrite} {
			t.Run(backend+"/"+upd.String(), func(t *testing.T) {
				now := time.UnixMilli(1_000_000)
				ttl := stream.TTLConfig{TTL: 10 * time.Second, Update: upd, Now: func() time.Time { return now }}
				rt := withBackend(t, backend, runtimeFor("op", 1, 0, 16))
				s, err := stream.NewMapState[string, string, int64](rt, "m", nil, ttl)
				if err != nil {
					t.Fatal(err)
				}
				for _, uk := range []string{"read", "iterated"} {
					if err := s.Put("k", uk, 1); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Put("idle", "x", 1); err != nil {
					t.Fatal(err)
				}
				now = now.Add(6 * time.Second)
				if _, ok, _ := s.Get("k", "read"); !ok {
					t.Fatal("read 6 s after the write: gone")
				}
				if ok, _ := s.Contains("k", "iterated"); !ok {
					t.Fatal("6 s after the write: gone")
				}
				now = now.Add(6 * time.Second) // 12 s after the writes, 6 s after the reads
				got := mapEntries(t, s, "k")
				want := map[string]int64{}
				if upd == stream.TTLOnReadAndWrite {
					want = map[string]int64{"read": 1, "iterated": 1}
				}
				if !maps.Equal(got, want) {
					t.Fatalf("update %d, 12 s after write, 6 s after read: %v, want %v", upd, got, want)
				}
				if empty, err := s.IsEmpty("idle"); err != nil || !empty {
					t.Fatalf("idle entry 12 s after its write: empty=%v %v", empty, err)
				}
				if n := stored(t, rt, "m"); n != len(want) {
					t.Fatalf("expired entries met by Entries and IsEmpty were not deleted: %d stored, %d live", n, len(want))
				}
				// Expired entries are left out of snapshots, live ones restore at another parallelism.
				now = now.Add(11 * time.Second) // every entry of k expired under both update types
				if err := s.Put("k2", "a", 5); err != nil {
					t.Fatal(err)
				}
				var w snapshot.Writer
				if err := s.Snapshot(w.Operator("op")); err != nil {
					t.Fatal(err)
				}
				file := w.Encode(snapshot.Header{Vertex: "v", Parallelism: 1, MaxParallelism: 16, KeyGroupEnd: 15, Checkpoint: 1, Attempt: 1})
				restored := 0
				for i := range 2 {
					rt2 := withBackend(t, backend, runtimeFor("op", 2, i, 16))
					s2, err := stream.NewMapState[string, string, int64](rt2, "m", nil, ttl)
					if err != nil {
						t.Fatal(err)
					}
					if err := s2.Restore(restoreFor(t, rt2, [][]byte{file})); err != nil {
						t.Fatal(err)
					}
					restored += stored(t, rt2, "m")
					if rt2.OwnsKeyGroup(stream.KeyGroupOf("k2", 16)) {
						if v, ok, _ := s2.Get("k2", "a"); !ok || v != 5 {
							t.Fatalf("restored k2/a = %d %v", v, ok)
						}
					}
				}
				if restored != 1 {
					t.Fatalf("restored %d entries, want only k2's live one", restored)
				}
			})
		}
	}
}
