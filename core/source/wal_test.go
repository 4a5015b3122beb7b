package source

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomOps drives tr with a seeded mix of every operation.
func randomOps(r *rand.Rand, tr *Tracker, n int) {
	cp := int64(0)
	next := 0
	for range n {
		sub := r.IntN(4)
		switch r.IntN(8) {
		case 0, 1:
			tr.RegisterReader(sub, int64(r.IntN(3)))
		case 2:
			tr.UnregisterReader(sub, int64(r.IntN(3)))
		case 3, 4:
			next++
			tr.Assign(Assignment{sub, []Split{{ID: fmt.Sprint("s", next), Data: []byte{byte(next)}}}})
		case 5:
			cp++
			tr.SnapshotState(cp)
		case 6:
			if cp > 0 {
				tr.OnCheckpointComplete(1 + r.Int64N(cp))
			}
			tr.SignalNoMoreSplits(sub)
		case 7:
			tr.ReaderFailed(sub)
		}
	}
}

func encodeAll(t *testing.T, es []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range es {
		b, err := EncodeEntry(e)
		if err != nil {
			t.Fatalf("EncodeEntry(%+v): %v", e, err)
		}
		buf.Write(b)
	}
	return buf.Bytes()
}

func sameState(a, b *Tracker) bool {
	ca, cb := a.Compact(), b.Compact()
	return reflect.DeepEqual(ca, cb)
}

func TestReplayRebuildsState(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		tr := NewTracker()
		randomOps(r, tr, 200)
		log := tr.TakeLog()
		data := encodeAll(t, log)
		entries, truncated, err := DecodeLog(data)
		if err != nil || truncated {
			t.Fatalf("seed %d: DecodeLog = %v, truncated %v", seed, err, truncated)
		}
		got, err := Replay(entries)
		if err != nil {
			t.Fatalf("seed %d: Replay: %v", seed, err)
		}
		if !sameState(tr, got) || got.Seq() != tr.Seq() {
			t.Fatalf("seed %d: replayed state differs:\n%+v\n%+v", seed, tr.Compact().State, got.Compact().State)
		}

		// Compaction: state entry plus later entries replays to the same tracker.
		snap := tr.Compact()
		randomOps(r, tr, 100)
		rest := tr.TakeLog()
		got2, err := Replay(append([]Entry{snap}, rest...))
		if err != nil {
			t.Fatalf("seed %d: Replay after compaction: %v", seed, err)
		}
		if !sameState(tr, got2) {
			t.Fatalf("seed %d: compacted replay differs", seed)
		}
		// The replayed tracker keeps numbering where the log stopped.
		got2.SnapshotState(1 << 40)
		if e := got2.TakeLog(); len(e) != 1 || e[0].Seq != tr.Seq()+1 {
			t.Fatalf("seed %d: next entry after replay = %+v, want seq %d", seed, e, tr.Seq()+1)
		}
	}
}

func TestReplayErrors(t *testing.T) {
	reg := Entry{Version: 1, Seq: 1, Kind: KindRegister, Subtask: 0}
	tests := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"gap", []Entry{reg, {Version: 1, Seq: 3, Kind: KindSnapshot, Checkpoint: 1}}, "seq 3, expected 2"},
		{"does not start at 1", []Entry{{Version: 1, Seq: 2, Kind: KindRegister}}, "seq 2, expected 1"},
		{"assign to unregistered", []Entry{{Version: 1, Seq: 1, Kind: KindAssign, Assignments: []Assignment{{3, splits("a")}}}}, "not registered"},
		{"double register", []Entry{reg, {Version: 1, Seq: 2, Kind: KindRegister}}, "registered twice"},
		{"snapshot order", []Entry{{Version: 1, Seq: 1, Kind: KindSnapshot, Checkpoint: 5}, {Version: 1, Seq: 2, Kind: KindSnapshot, Checkpoint: 5}}, "snapshot 5 after snapshot 5"},
		{"bad entry", []Entry{{Version: 2, Seq: 1, Kind: KindRegister}}, "version 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Replay(tt.entries)
			if !errors.Is(err, ErrBadEntry) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Replay = %v, want ErrBadEntry mentioning %q", err, tt.want)
			}
		})
	}
}

func TestDecodeEntryErrors(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		{`{"v":1,"seq":1,"kind":"register","subtask":0}`, ""},
		{`{"v":1,"seq":1,"kind":"assign","subtask":0,"assignments":[{"subtask":0,"splits":[{"id":"a","data":"AAE="}]}]}`, ""},
		{`{"v":1,"seq":1,"kind":"register","extra":1}`, `unknown field "extra"`},
		{`{"v":1,"seq":1,"kind":"register"} x`, "trailing data"},
		{`{"v":1,"seq":1,"kind":"explode"}`, `unknown kind "explode"`},
		{`{"v":1,"seq":0,"kind":"register"}`, "seq 0"},
		{`{"v":1,"seq":1,"kind":"register","subtask":-2}`, "subtask -2"},
		{`{"v":1,"seq":1,"kind":"assign"}`, "without assignments"},
		{`{"v":1,"seq":1,"kind":"assign","assignments":[{"subtask":0,"splits":[{"id":""}]}]}`, "split without id"},
		{`{"v":1,"seq":1,"kind":"assign","assignments":[{"subtask":0,"splits":[]},{"subtask":0,"splits":[]}]}`, "listed twice"},
		{`{"v":1,"seq":1,"kind":"snapshot","checkpoint":0}`, "snapshot checkpoint 0"},
		{`{"v":1,"seq":1,"kind":"reset","checkpoint":0}`, "reset to checkpoint 0"},
		{`{"v":1,"seq":1,"kind":"register","assignments":[{"subtask":0,"splits":[]}]}`, "register entry with assignments"},
		{`{"v":1,"seq":3,"kind":"state"}`, "state entry without state"},
		{`{"v":1,"seq":3,"kind":"state","state":{"readers":[],"epochs":[{"checkpoint":9,"assignments":[]}],"uncheckpointed":[],"noMoreSplits":[],"lastSnapshot":5,"lastComplete":-1}}`, "epoch 9 outside"},
		{`[]`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		_, err := DecodeEntry([]byte(tt.line))
		if tt.want == "" {
			if err != nil {
				t.Errorf("DecodeEntry(%s) = %v", tt.line, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadEntry) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeEntry(%s) = %v, want ErrBadEntry mentioning %q", tt.line, err, tt.want)
		}
	}
}

func TestDecodeLogTruncatedTail(t *testing.T) {
	tr := NewTracker()
	tr.RegisterReader(0, 0)
	tr.Assign(Assignment{0, splits("a")})
	data := encodeAll(t, tr.TakeLog())
	torn := append(bytes.Clone(data), []byte(`{"v":1,"seq":3,"ki`)...)
	entries, truncated, err := DecodeLog(torn)
	if err != nil || !truncated || len(entries) != 2 {
		t.Fatalf("DecodeLog(torn) = %d entries, truncated %v, %v", len(entries), truncated, err)
	}
	corrupt := append([]byte("garbage\n"), data...)
	if _, _, err := DecodeLog(corrupt); !errors.Is(err, ErrBadEntry) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("DecodeLog(corrupt) = %v", err)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	tr := NewTracker()
	randomOps(rand.New(rand.NewPCG(1, 2)), tr, 50)
	for _, e := range append(tr.TakeLog(), tr.Compact()) {
		b, _ := EncodeEntry(e)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := DecodeEntry(line)
		if err != nil {
			if !errors.Is(err, ErrBadEntry) {
				t.Fatalf("error %v does not wrap ErrBadEntry", err)
			}
			return
		}
		b, err := EncodeEntry(e)
		if err != nil {
			t.Fatalf("decoded entry does not encode: %v", err)
		}
		if _, err := DecodeEntry(b); err != nil {
			t.Fatalf("re-decoding failed: %v", err)
		}
		// A valid entry may still not apply, but replay must never panic.
		if e.Kind == KindState || e.Seq == 1 {
			Replay([]Entry{e})
		}
	})
}
