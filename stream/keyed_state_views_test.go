package stream_test

import (
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

func TestValueStateTTL(t *testing.T) {
	for _, backend := range backendTypes {
		for _, upd := range []stream.TTLUpdate{stream.TTLOnCreateAndWrite, stream.TTLOnReadAndWrite} {
			t.Run(backend+"/"+upd.String(), func(t *testing.T) {
				now := time.UnixMilli(1_000_000)
				ttl := stream.TTLConfig{TTL: 10 * time.Second, Update: upd, Now: func() time.Time { return now }}
				rt := withBackend(t, backend, runtimeFor("op", 1, 0, 16))
				s := stream.NewValueState[string, int64](rt, "count", nil, ttl)
				defer s.Close()
				if err := s.Update("a", 7); err != nil {
					t.Fatal(err)
				}
				now = now.Add(6 * time.Second)
				if v, ok, err := s.Value("a"); err != nil || !ok || v != 7 {
					t.Fatalf("after 6 s: %d %v %v", v, ok, err)
				}
				now = now.Add(6 * time.Second) // 12 s after the write, 6 s after the read
				_, ok, err := s.Value("a")
				if err != nil {
					t.Fatal(err)
				}
				if want := upd == stream.TTLOnReadAndWrite; ok != want {
					t.Fatalf("update %d: 12 s after write, 6 s after read: live=%v, want %v", upd, ok, want)
				}
				// Survives snapshot and restore at another parallelism while live.
				if err := s.Update("b", 9); err != nil {
					t.Fatal(err)
				}
				var w snapshot.Writer
				if err := s.Snapshot(w.Operator("op")); err != nil {
					t.Fatal(err)
				}
				file := w.Encode(snapshot.Header{Vertex: "v", Parallelism: 1, MaxParallelism: 16, KeyGroupEnd: 15, Checkpoint: 1, Attempt: 1})
				rt2 := withBackend(t, backend, runtimeFor("op", 2, 1, 16))
				s2 := stream.NewValueState[string, int64](rt2, "count", nil, ttl)
				defer s2.Close()
				if err := s2.Restore(restoreFor(t, rt2, [][]byte{file})); err != nil {
					t.Fatal(err)
				}
				if !rt2.OwnsKeyGroup(stream.KeyGroupOf("b", 16)) {
					rt2 = withBackend(t, backend, runtimeFor("op", 2, 0, 16))
					s2 = stream.NewValueState[string, int64](rt2, "count", nil, ttl)
					if err := s2.Restore(restoreFor(t, rt2, [][]byte{file})); err != nil {
						t.Fatal(err)
					}
				}
				if v, ok, _ := s2.Value("b"); !ok || v != 9 {
					t.Fatalf("restored b = %d %v", v, ok)
				}
				now = now.Add(11 * time.Second)
				if _, ok, _ := s2.Value("b"); ok {
					t.Fatal("b still live 11 s after its write")
				}
				if err := s2.Clear("b"); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
