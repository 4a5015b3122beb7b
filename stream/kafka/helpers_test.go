package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
)

// memState is one checkpoint's list state of all subtasks of one operator, redistributed
// on restore as the TaskManager does (Union: everything to everyone; RoundRobin: by id).
type memState struct {
	items map[string][]stream.ListItem
	modes map[string]stream.ListMode
}

func newMemState() *memState {
	return &memState{items: map[string][]stream.ListItem{}, modes: map[string]stream.ListMode{}}
}

func (m *memState) Keyed(string, int, []byte, []byte) { panic("no keyed state in a sink") }

func (m *memState) List(state string, mode stream.ListMode, item stream.ListItem) {
	m.items[state] = append(m.items[state], item)
	m.modes[state] = mode
}

// reader returns subtask's share at parallelism p.
func (m *memState) reader(subtask, p int) stream.StateReader {
	return &memReader{m: m, subtask: subtask, p: p}
}

type memReader struct {
	m          *memState
	subtask, p int
}

func (r *memReader) Keyed(string, func(int, []byte, []byte) error) error { return nil }

func (r *memReader) List(state string) []stream.ListItem {
	items := slices.Clone(r.m.items[state])
	if r.m.modes[state] == stream.Union {
		return items
	}
	slices.SortFunc(items, func(a, b stream.ListItem) int { return stream.CompareIDs(a.ID, b.ID) })
	var out []stream.ListItem
	for i := r.subtask; i < len(items); i += r.p {
		out = append(out, items[i])
	}
	return out
}

// collector gathers what a reader emits.
type collector struct {
	mu   sync.Mutex
	vals []string
	ts   []int64
}

func (c *collector) Collect(v any, ts int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vals = append(c.vals, v.(string))
	c.ts = append(c.ts, ts)
	return nil
}

func (c *collector) sorted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.vals)
	slices.Sort(out)
	return out
}

// waitFor polls cond every 20 ms until it holds or the (generous) deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func valueString(r Record) (string, error) { return string(r.Value), nil }

func runtimeOf(subtask, p int) stream.Runtime {
	return stream.Runtime{JobID: "job", Vertex: "sink", OperatorID: "sink", Subtask: subtask, Parallelism: p, CheckpointingEnabled: true}
}

func values(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%04d", prefix, i))
	}
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

var bg = context.Background()
