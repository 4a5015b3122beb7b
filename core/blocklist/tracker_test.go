package blocklist

import (
	"slices"
	"testing"
	"time"
)

func ids(ns []BlockedNode) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}

func TestTrackerAdd(t *testing.T) {
	type step struct {
		nodes       []BlockedNode
		wantAdded   []string
		wantMerged  []string
		wantBlocked []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "new nodes are added sorted, zero start becomes now",
			steps: []step{{
				nodes:       []BlockedNode{{ID: "b", Action: MarkBlocked, Cause: "x"}, {ID: "a", Action: MarkBlocked, Cause: "y"}},
				wantAdded:   []string{"a", "b"},
				wantMerged:  []string{},
				wantBlocked: []string{"a", "b"},
			}},
		},
		{
			name: "merge that changes is reported, unchanged is not",
			steps: []step{
				{nodes: []BlockedNode{{ID: "a", Action: MarkBlocked, Cause: "x"}}, wantAdded: []string{"a"}, wantMerged: []string{}, wantBlocked: []string{"a"}},
				{nodes: []BlockedNode{{ID: "a", Action: MarkBlocked, Cause: "x"}}, wantAdded: []string{}, wantMerged: []string{}, wantBlocked: []string{"a"}},
				{nodes: []BlockedNode{{ID: "a", Action: MarkBlockedAndEvacuate, Cause: "x"}}, wantAdded: []string{}, wantMerged: []string{"a"}, wantBlocked: []string{"a"}},
			},
		},
		{
			name: "two records for one new id in one call stay added",
			steps: []step{{
				nodes:       []BlockedNode{{ID: "a", Action: MarkBlocked, Cause: "x"}, {ID: "a", Action: MarkBlockedAndEvacuate, Cause: "y"}},
				wantAdded:   []string{"a"},
				wantMerged:  []string{},
				wantBlocked: []string{"a"},
			}},
		},
		{
			name: "invalid and already expired nodes are skipped",
			steps: []step{{
				nodes: []BlockedNode{
					{ID: "", Action: MarkBlocked},
					{ID: "bad", Action: "NOPE"},
					{ID: "old", Action: MarkBlocked, Start: at(0), End: at(time.Second)},
					{ID: "ok", Action: MarkBlocked},
				},
				wantAdded:   []string{"ok"},
				wantMerged:  []string{},
				wantBlocked: []string{"ok"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker()
			now := at(time.Minute)
			for i, s := range tt.steps {
				added, merged := tr.Add(now, s.nodes...)
				if got := ids(added); !slices.Equal(got, s.wantAdded) {
					t.Errorf("step %d: added = %v, want %v", i, got, s.wantAdded)
				}
				if got := ids(merged); !slices.Equal(got, s.wantMerged) {
					t.Errorf("step %d: merged = %v, want %v", i, got, s.wantMerged)
				}
				if got := ids(tr.All()); !slices.Equal(got, s.wantBlocked) {
					t.Errorf("step %d: All() = %v, want %v", i, got, s.wantBlocked)
				}
				if tr.Len() != len(s.wantBlocked) {
					t.Errorf("step %d: Len() = %d, want %d", i, tr.Len(), len(s.wantBlocked))
				}
			}
		})
	}
}

func TestTrackerAddFillsStartAndMergesInOrder(t *testing.T) {
	tr := NewTracker()
	now := at(time.Minute)
	tr.Add(now, BlockedNode{ID: "a", Action: MarkBlocked, Cause: "x", End: at(time.Hour)},
		BlockedNode{ID: "a", Action: MarkBlocked, Cause: "y", End: at(2 * time.Hour)})
	got, ok := tr.Get("a")
	want := BlockedNode{ID: "a", Action: MarkBlocked, Start: now, End: at(2 * time.Hour), Cause: "x,y"}
	if !ok || !got.Equal(want) {
		t.Fatalf("Get(a) = %+v, %v; want %+v", got, ok, want)
	}
}

func TestTrackerExpiry(t *testing.T) {
	tr := NewTracker()
	now := at(0)
	tr.Add(now,
		BlockedNode{ID: "perm", Action: MarkBlocked},
		BlockedNode{ID: "short", Action: MarkBlocked, End: at(10 * time.Second)},
		BlockedNode{ID: "long", Action: MarkBlockedAndEvacuate, End: at(time.Minute)},
		BlockedNode{ID: "short2", Action: MarkBlocked, End: at(10 * time.Second)},
	)
	tests := []struct {
		now         time.Time
		wantRemoved []string
		wantNext    time.Time
		wantHasNext bool
		wantLeft    []string
	}{
		{at(9 * time.Second), []string{}, at(10 * time.Second), true, []string{"long", "perm", "short", "short2"}},
		{at(10 * time.Second), []string{"short", "short2"}, at(time.Minute), true, []string{"long", "perm"}},
		{at(30 * time.Second), []string{}, at(time.Minute), true, []string{"long", "perm"}},
		{at(2 * time.Minute), []string{"long"}, time.Time{}, false, []string{"perm"}},
	}
	for i, tt := range tests {
		if got := ids(tr.RemoveExpired(tt.now)); !slices.Equal(got, tt.wantRemoved) {
			t.Errorf("step %d: RemoveExpired = %v, want %v", i, got, tt.wantRemoved)
		}
		next, ok := tr.NextExpiry()
		if ok != tt.wantHasNext || !next.Equal(tt.wantNext) {
			t.Errorf("step %d: NextExpiry = %v, %v; want %v, %v", i, next, ok, tt.wantNext, tt.wantHasNext)
		}
		if got := tr.IDs(); !slices.Equal(got, tt.wantLeft) {
			t.Errorf("step %d: IDs = %v, want %v", i, got, tt.wantLeft)
		}
	}
}

func TestTrackerRemove(t *testing.T) {
	tr := NewTracker()
	tr.Add(at(0), BlockedNode{ID: "a", Action: MarkBlocked}, BlockedNode{ID: "b", Action: MarkBlocked}, BlockedNode{ID: "c", Action: MarkBlocked})
	if got := ids(tr.Remove("c", "zzz", "a")); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("Remove = %v, want [a c]", got)
	}
	if tr.IsBlocked("a") || !tr.IsBlocked("b") || tr.IsBlocked("c") {
		t.Fatalf("after Remove: blocked = %v, want [b]", tr.IDs())
	}
	if got := tr.Remove("a"); len(got) != 0 {
		t.Fatalf("second Remove(a) = %v, want nothing", got)
	}
}
