package snapshot_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

const maxP = 16

// writeSubtask writes the state a subtask of parallelism p owns out of the global key
// space 0..keys-1: keyed entries key -> key*10 and one split per subtask.
func writeSubtask(t *testing.T, keys, p, index int) []byte {
	t.Helper()
	start, end := jobgraph.KeyGroupRange(maxP, p, index)
	var w snapshot.Writer
	op := w.Operator("op")
	for k := range keys {
		kg := stream.KeyGroupOf(int64(k), maxP)
		if kg < start || kg > end {
			continue
		}
		op.Keyed("value", kg, []byte(fmt.Sprint(k)), []byte(fmt.Sprint(k*10)))
	}
	w.Operator("src").List("splits", stream.RoundRobin, stream.ListItem{ID: fmt.Sprintf("split-%d", index), Data: []byte{byte(index)}})
	w.Operator("sink").List("pending", stream.Union, stream.ListItem{ID: fmt.Sprintf("file-%d", index)})
	return w.Encode(snapshot.Header{Vertex: "v", Subtask: index, Parallelism: p, MaxParallelism: maxP, KeyGroupStart: start, KeyGroupEnd: end, Checkpoint: 7, Attempt: 1})
}

// restoreAll restores every subtask at parallelism p from files and checks that each key
// lands exactly once, in the subtask owning its key group, with its value.
func restoreAll(t *testing.T, files [][]byte, keys, p int) {
	t.Helper()
	seen := map[string]int{}
	var splits, pendingTotal int
	for index := range p {
		start, end := jobgraph.KeyGroupRange(maxP, p, index)
		r := snapshot.NewRestore(index, p, start, end)
		for _, b := range files {
			f, err := snapshot.Read(onlyReader{bytes.NewReader(b)}, r.Wants)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Add(f); err != nil {
				t.Fatal(err)
			}
		}
		err := r.Operator("op").Keyed("value", func(kg int, key, value []byte) error {
			if kg < start || kg > end {
				return fmt.Errorf("subtask %d got key group %d outside %d..%d", index, kg, start, end)
			}
			var k int
			fmt.Sscan(string(key), &k)
			if string(value) != fmt.Sprint(k*10) {
				return fmt.Errorf("key %s has value %s", key, value)
			}
			seen[string(key)]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		splits += len(r.Operator("src").List("splits"))
		if got := len(r.Operator("sink").List("pending")); got != len(files) {
			t.Fatalf("union state: subtask %d got %d items, want %d", index, got, len(files))
		}
		pendingTotal++
	}
	if len(seen) != keys {
		t.Fatalf("restored %d keys at parallelism %d, want %d", len(seen), p, keys)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("key %s restored %d times", k, n)
		}
	}
	if splits != len(files) {
		t.Fatalf("round-robin state: %d splits restored, want %d", splits, len(files))
	}
}

// onlyReader hides Seek so the discard path is exercised too.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestRestoreAtAnyParallelism(t *testing.T) {
	const keys = 200
	for _, tc := range []struct{ from, to int }{{2, 3}, {3, 1}, {1, 4}, {4, 16}, {16, 2}} {
		t.Run(fmt.Sprintf("%d->%d", tc.from, tc.to), func(t *testing.T) {
			var files [][]byte
			for i := range tc.from {
				files = append(files, writeSubtask(t, keys, tc.from, i))
			}
			restoreAll(t, files, keys, tc.to)
		})
	}
}

func TestReadSeeksOnlyOwnedGroups(t *testing.T) {
	b := writeSubtask(t, 100, 1, 0)
	f, err := snapshot.Read(bytes.NewReader(b), func(kg int) bool { return kg == 3 })
	if err != nil {
		t.Fatal(err)
	}
	r := snapshot.NewRestore(0, 1, 3, 3)
	if err := r.Add(f); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := r.Operator("op").Keyed("value", func(kg int, _, _ []byte) error {
		if kg != 3 {
			t.Fatalf("got key group %d", kg)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no entries of key group 3 restored")
	}
}

func TestParseRejectsCorruptFiles(t *testing.T) {
	good := writeSubtask(t, 50, 2, 1)
	for name, b := range map[string][]byte{
		"empty":       nil,
		"bad magic":   append([]byte("NOTSNAP!"), good[8:]...),
		"bad version": append(append([]byte(snapshot.Magic), 9), good[9:]...),
		"truncated":   good[:len(good)-3],
		"no data":     good[:20],
	} {
		if _, err := snapshot.Parse(b); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := snapshot.Parse(good); err != nil {
		t.Fatalf("good file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(writeSubtaskBytes(10, 1, 0))
	f.Add(writeSubtaskBytes(30, 4, 2))
	f.Add([]byte(snapshot.Magic + "\x01\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := snapshot.Parse(b)
		if err != nil {
			return
		}
		h := file.Header
		r := snapshot.NewRestore(h.Subtask, h.Parallelism, h.KeyGroupStart, h.KeyGroupEnd)
		if err := r.Add(file); err != nil {
			return
		}
		for _, o := range h.Operators {
			for _, k := range o.Keyed {
				_ = r.Operator(o.ID).Keyed(k.State, func(int, []byte, []byte) error { return nil })
			}
			for _, l := range o.Lists {
				_ = r.Operator(o.ID).List(l.State)
			}
		}
	})
}

func writeSubtaskBytes(keys, p, index int) []byte {
	start, end := jobgraph.KeyGroupRange(maxP, p, index)
	var w snapshot.Writer
	for k := range keys {
		kg := stream.KeyGroupOf(int64(k), maxP)
		if kg >= start && kg <= end {
			w.Operator("op").Keyed("value", kg, []byte{byte(k)}, []byte{byte(k), 1})
		}
	}
	w.Operator("src").List("splits", stream.RoundRobin, stream.ListItem{ID: "s", Data: []byte{1, 2}})
	return w.Encode(snapshot.Header{Vertex: "v", Subtask: index, Parallelism: p, MaxParallelism: maxP, KeyGroupStart: start, KeyGroupEnd: end})
}

func TestVertexEnded(t *testing.T) {
	file := func(p, index int, ended bool) *snapshot.File {
		start, end := jobgraph.KeyGroupRange(maxP, p, index)
		var w snapshot.Writer
		w.Operator("op").List("splits", stream.RoundRobin, stream.ListItem{ID: fmt.Sprint(index)})
		f, err := snapshot.Parse(w.Encode(snapshot.Header{Vertex: "v", Subtask: index, Parallelism: p, MaxParallelism: maxP,
			KeyGroupStart: start, KeyGroupEnd: end, Checkpoint: 3, EndedInput: ended}))
		if err != nil {
			t.Fatal(err)
		}
		if f.Header.EndedInput != ended {
			t.Fatalf("EndedInput %v after a round trip, want %v", f.Header.EndedInput, ended)
		}
		return f
	}
	tests := []struct {
		name  string
		files []*snapshot.File
		want  bool
	}{
		{"no files", nil, false},
		{"every subtask ended", []*snapshot.File{file(2, 0, true), file(2, 1, true)}, true},
		{"one subtask still running", []*snapshot.File{file(2, 0, true), file(2, 1, false)}, false},
		{"a subtask's file is missing", []*snapshot.File{file(3, 0, true), file(3, 2, true)}, false},
		{"files of two parallelisms", []*snapshot.File{file(2, 0, true), file(1, 0, true)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := snapshot.NewRestore(0, 3, 0, maxP-1)
			for _, f := range tc.files {
				if err := r.Add(f); err != nil {
					t.Fatal(err)
				}
			}
			if got := r.VertexEnded(); got != tc.want {
				t.Fatalf("VertexEnded() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReadsVersion1Files: files written before the header flags existed still parse.
func TestReadsVersion1Files(t *testing.T) {
	// Version 1 layout: the version 2 file minus the flags byte after the attempt.
	var w snapshot.Writer
	w.Operator("src").List("splits", stream.RoundRobin, stream.ListItem{ID: "s", Data: []byte{7}})
	v2 := w.Encode(snapshot.Header{Vertex: "v", Parallelism: 1, MaxParallelism: maxP, KeyGroupEnd: maxP - 1, Checkpoint: 2, Attempt: 1})
	// magic | version | header length (1 byte here) | header
	hlen := int(v2[len(snapshot.Magic)+1])
	header := v2[len(snapshot.Magic)+2 : len(snapshot.Magic)+2+hlen]
	// header: vertex "v" (2 bytes), 5 uvarints, checkpoint, attempt (1 byte each here), flags
	flagsAt := 2 + 5 + 1 + 1
	if header[flagsAt] != 0 {
		t.Fatalf("unexpected flags byte %d", header[flagsAt])
	}
	v1 := append([]byte(snapshot.Magic), 1, byte(hlen-1))
	v1 = append(v1, header[:flagsAt]...)
	v1 = append(v1, header[flagsAt+1:]...)
	v1 = append(v1, v2[len(snapshot.Magic)+2+hlen:]...)
	f, err := snapshot.Parse(v1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.EndedInput || f.Header.Checkpoint != 2 || len(f.Header.Operators) != 1 {
		t.Fatalf("version 1 header parsed as %+v", f.Header)
	}
}
