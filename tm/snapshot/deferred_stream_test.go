package snapshot_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"runtime"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// entryWrite is a deferred write of entries (state, key group, key, value) in order.
type entryWrite [][4]string

func (e entryWrite) write(w stream.StateWriter) error {
	for _, x := range e {
		kg := 0
		fmt.Sscan(x[1], &kg)
		w.Keyed(x[0], kg, []byte(x[2]), []byte(x[3]))
	}
	return nil
}

func groupEntries(st string, kg, n int) entryWrite {
	var e entryWrite
	for i := range n {
		e = append(e, [4]string{st, fmt.Sprint(kg), fmt.Sprintf("k%d-%d", kg, i), strings.Repeat("v", i%300)})
	}
	return e
}

// renamed returns e with its keys prefixed.
func renamed(e entryWrite, prefix string) entryWrite {
	out := make(entryWrite, len(e))
	for i, x := range e {
		x[2] = prefix + x[2]
		out[i] = x
	}
	return out
}

// fileKeyed returns every keyed entry of a file by operator, state, key group and key.
func fileKeyed(t *testing.T, b []byte) map[string]string {
	t.Helper()
	f, err := snapshot.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	r := snapshot.NewRestore(0, 1, 0, maxP-1)
	if err := r.Add(f); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range f.Header.Operators {
		for _, k := range o.Keyed {
			err := r.Operator(o.ID).Keyed(k.State, func(kg int, key, value []byte) error {
				got[fmt.Sprintf("%s/%s/%d/%s", o.ID, k.State, kg, key)] = string(value)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return got
}

var deferredHeader = snapshot.Header{Vertex: "v", Parallelism: 1, MaxParallelism: maxP, KeyGroupEnd: maxP - 1, Checkpoint: 2, Attempt: 1}

// TestEncodeToStreamsDeferredWrites checks that EncodeTo writes deferred writes (the heap's
// copy-on-write views) into the file, streamed when they can be and buffered when not (list
// items, a key group in two runs, a key group the writer's own blocks hold), with the same
// entries as running them first (RunDeferred) and Encode, and releases every view once.
func TestEncodeToStreamsDeferredWrites(t *testing.T) {
	plain := append(groupEntries("count", 1, 40), groupEntries("count", 3, 7)...)
	other := append(groupEntries("sum", 0, 3), groupEntries("sum", 15, 90)...)
	for _, tc := range []struct {
		name string
		// writes are the deferred writes of operators "a" and "b"; list makes "b"'s write
		// also emit a list item.
		a, b entryWrite
		list bool
		own  bool // the writer itself holds a block of a's state "count", key group 3
	}{
		{name: "streamed", a: plain, b: other},
		{name: "list item", a: plain, b: other, list: true},
		{name: "key group in two runs", a: append(append(groupEntries("count", 1, 5), groupEntries("count", 2, 5)...), renamed(groupEntries("count", 1, 2), "again")...), b: other},
		{name: "key group of the writer's own", a: plain, b: other, own: true},
		{name: "empty", a: nil, b: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(released *int) *snapshot.Writer {
				w := &snapshot.Writer{}
				w.AllowDeferred()
				w.Operator("src").List("splits", stream.RoundRobin, stream.ListItem{ID: "s", Data: []byte{1}})
				if tc.own {
					w.Operator("a").Keyed("count", 3, []byte("mine"), []byte("x"))
				}
				for _, op := range []string{"a", "b"} {
					e := map[string]entryWrite{"a": tc.a, "b": tc.b}[op]
					write := e.write
					if op == "b" && tc.list {
						write = func(w stream.StateWriter) error {
							w.List("l", stream.Union, stream.ListItem{ID: "x"})
							return e.write(w)
						}
					}
					w.Operator(op).(stream.AsyncStateWriter).Defer(write, func() { *released++ })
				}
				return w
			}
			var relRun, relStream int
			ref := build(&relRun)
			if err := ref.RunDeferred(); err != nil {
				t.Fatal(err)
			}
			want := ref.Encode(deferredHeader)
			w := build(&relStream)
			var out bytes.Buffer
			n, err := w.EncodeTo(&out, deferredHeader, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(out.Len()) || w.Deferred() != 0 {
				t.Fatalf("EncodeTo returned %d, wrote %d, left %d deferred writes", n, out.Len(), w.Deferred())
			}
			w.Release()
			if relRun != 2 || relStream != 2 {
				t.Fatalf("views released %d times by RunDeferred, %d by EncodeTo; want 2 each", relRun, relStream)
			}
			if got, exp := fileKeyed(t, out.Bytes()), fileKeyed(t, want); !maps.Equal(got, exp) || len(exp) != len(tc.a)+len(tc.b)+map[bool]int{true: 1}[tc.own] {
				t.Fatalf("streamed file has %d entries, encoded %d (deferred %d), equal=%v", len(got), len(exp), len(tc.a)+len(tc.b), maps.Equal(got, exp))
			}
		})
	}
}

// TestEncodeToRefusesDeferredWritesThatChange checks that a deferred write yielding other
// entries in its second pass fails the encoding instead of writing a file whose index
// lies, and that its view is released all the same.
func TestEncodeToRefusesDeferredWritesThatChange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(pass int, w stream.StateWriter)
	}{
		{"longer value", func(pass int, w stream.StateWriter) { w.Keyed("s", 1, []byte("k"), []byte(strings.Repeat("v", pass))) }},
		{"other key group", func(pass int, w stream.StateWriter) { w.Keyed("s", pass, []byte("k"), []byte("v")) }},
		{"fewer entries", func(pass int, w stream.StateWriter) {
			for i := range 3 - pass {
				w.Keyed("s", 1, []byte{byte(i)}, []byte("v"))
			}
		}},
		{"list item", func(pass int, w stream.StateWriter) {
			w.Keyed("s", 1, []byte("k"), []byte("v"))
			if pass == 2 {
				w.List("l", stream.Union, stream.ListItem{ID: "x"})
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w snapshot.Writer
			w.AllowDeferred()
			pass, released := 0, 0
			w.Operator("op").(stream.AsyncStateWriter).Defer(func(sw stream.StateWriter) error {
				pass++
				tc.write(pass, sw)
				return nil
			}, func() { released++ })
			_, err := w.EncodeTo(io.Discard, deferredHeader, nil)
			if err == nil || !strings.Contains(err.Error(), "changed between the two passes") || !strings.Contains(err.Error(), `operator "op"`) {
				t.Fatalf("EncodeTo: %v", err)
			}
			w.Release()
			if released != 1 {
				t.Fatalf("view released %d times", released)
			}
		})
	}
}

// TestEncodeToStreamsWithoutBuffering checks that streaming deferred writes holds no copy
// of the state: encoding 20 MB of entries allocates less than a megabyte (the output's
// buffer, the header, the runs), where running them into buffers first allocates more than
// the state itself.
func TestEncodeToStreamsWithoutBuffering(t *testing.T) {
	value := bytes.Repeat([]byte{7}, 1000)
	const entries = 20000
	write := func(w stream.StateWriter) error {
		var key [8]byte
		for i := range entries {
			key[0], key[1] = byte(i), byte(i>>8)
			w.Keyed("acc", i*maxP/entries, key[:], value)
		}
		return nil
	}
	allocated := func(encode func(w *snapshot.Writer) int64) (bytes, written uint64) {
		var w snapshot.Writer
		w.AllowDeferred()
		w.Operator("op").(stream.AsyncStateWriter).Defer(write, func() {})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := encode(&w)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, uint64(n)
	}
	streamed, n := allocated(func(w *snapshot.Writer) int64 {
		n, err := w.EncodeTo(io.Discard, deferredHeader, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	})
	buffered, m := allocated(func(w *snapshot.Writer) int64 {
		if err := w.RunDeferred(); err != nil {
			t.Fatal(err)
		}
		return int64(len(w.Encode(deferredHeader)))
	})
	t.Logf("%d bytes of state: streaming allocated %d bytes, buffering %d", n, streamed, buffered)
	if n != m || n < entries*1000 {
		t.Fatalf("streamed %d bytes, buffered %d", n, m)
	}
	if streamed > 1<<20 || buffered < n {
		t.Fatalf("%d bytes of state: streaming allocated %d bytes, buffering %d", n, streamed, buffered)
	}
}
