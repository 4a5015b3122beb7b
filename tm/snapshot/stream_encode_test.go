package snapshot_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// TestEncodeToStreamsABackendView writes a file from a writer's blocks plus a pebble
// view's entries, and reads it back as if Encode had written everything.
func TestEncodeToStreamsABackendView(t *testing.T) {
	be, err := state.OpenPebble(state.PebbleOptions{Dir: t.TempDir(), Name: "enc"})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	want := map[string]string{}
	for k := range 500 {
		kg := stream.KeyGroupOf(int64(k), maxP)
		st := []string{"op/count", "op/sum", "other/x"}[k%3]
		key, val := fmt.Sprint(k), strings.Repeat("v", k%7)+fmt.Sprint(k)
		if err := be.Put(kg, st, []byte(key), []byte(val)); err != nil {
			t.Fatal(err)
		}
		want[st+"|"+key] = val
	}
	var w snapshot.Writer
	w.CoverBackend(be)
	w.Operator("op").Keyed("heap", 3, []byte("h"), []byte("1"))
	w.Operator("src").List("splits", stream.RoundRobin, stream.ListItem{ID: "s-0", Data: []byte{7}})
	want["op/heap|h"] = "1"
	if !w.Operator("op").(stream.BackendSnapshotter).SnapshotsBackend(be) {
		t.Fatal("a writer covering the backend does not say so")
	}
	v, err := be.View()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after the view do not show in the file.
	if err := be.Put(1, "op/count", []byte("late"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	src := func(fn func(op, st string, kg int, key, value []byte) error) error {
		return v.IterateRange(0, maxP-1, func(kg int, bname string, key, value []byte) error {
			op, st, _ := strings.Cut(bname, "/")
			return fn(op, st, kg, key, value)
		})
	}
	var out bytes.Buffer
	h := snapshot.Header{Vertex: "v", Subtask: 0, Parallelism: 1, MaxParallelism: maxP, KeyGroupStart: 0, KeyGroupEnd: maxP - 1, Checkpoint: 3, Attempt: 1}
	n, err := w.EncodeTo(&out, h, src)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(out.Len()) {
		t.Fatalf("EncodeTo returned %d, wrote %d", n, out.Len())
	}
	_ = v.Close()
	f, err := snapshot.Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	r := snapshot.NewRestore(0, 1, 0, maxP-1)
	if err := r.Add(f); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, op := range []string{"op", "other"} {
		for _, st := range []string{"count", "sum", "x", "heap"} {
			err := r.Operator(op).Keyed(st, func(kg int, key, value []byte) error {
				got[op+"/"+st+"|"+string(key)] = string(value)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("restored %d entries, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %q, want %q", k, got[k], v)
		}
	}
	if items := r.Operator("src").List("splits"); len(items) != 1 || items[0].ID != "s-0" {
		t.Fatalf("splits %v", items)
	}
	// A source that yields other entries the second time is refused.
	calls := 0
	bad := func(fn func(op, st string, kg int, key, value []byte) error) error {
		calls++
		return fn("op", "count", 1, []byte("k"), []byte(strings.Repeat("x", calls)))
	}
	if _, err := w.EncodeTo(&bytes.Buffer{}, h, bad); err == nil || !strings.Contains(err.Error(), "changed between the two passes") {
		t.Fatalf("a changing source: %v", err)
	}
}
