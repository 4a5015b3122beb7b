package allocator

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// drawDecision draws a small decision: TaskManagers with gaps in their free slots, in id
// order or not, sometimes with a repeated id; vertices in up to three groups; a previous
// placement that may name unknown TaskManagers.
func drawDecision(t *rapid.T) ([]Vertex, []TaskManager, Options) {
	var tms []TaskManager
	for range rapid.IntRange(0, 12).Draw(t, "tms") {
		tm := TaskManager{ID: fmt.Sprintf("tm%d", rapid.IntRange(0, 15).Draw(t, "id"))}
		for s := range 6 {
			if rapid.Bool().Draw(t, "free") {
				tm.Free = append(tm.Free, s)
			}
		}
		tms = append(tms, tm)
	}
	if rapid.Bool().Draw(t, "sorted") {
		slices.SortStableFunc(tms, func(a, b TaskManager) int { return cmpID(a.ID, b.ID) })
	}
	var vs []Vertex
	for i := range rapid.IntRange(1, 4).Draw(t, "vertices") {
		lo := rapid.IntRange(1, 3).Draw(t, "lower")
		vs = append(vs, Vertex{ID: fmt.Sprintf("v%d", i), Group: fmt.Sprintf("g%d", rapid.IntRange(0, 2).Draw(t, "group")),
			Lower: lo, Upper: lo + rapid.IntRange(0, 20).Draw(t, "spread")})
	}
	opts := Options{PreferMinimalTaskManagers: rapid.Bool().Draw(t, "packed")}
	if rapid.Bool().Draw(t, "previous") {
		opts.Previous = map[string][]string{}
		for g := range 3 {
			var l []string
			for range rapid.IntRange(0, 25).Draw(t, "ran") {
				id := ""
				if rapid.IntRange(0, 5).Draw(t, "nowhere") > 0 {
					id = fmt.Sprintf("tm%d", rapid.IntRange(0, 15).Draw(t, "on"))
				}
				l = append(l, id)
			}
			opts.Previous[fmt.Sprintf("g%d", g)] = l
		}
	}
	return vs, tms, opts
}

func cmpID(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestDecideWorkspace: a decision made with a Workspace that served any number of earlier
// decisions equals one made without, and (TaskManager ids being unique) is a valid plan: every assignment on a distinct
// free slot, every execution group placed once, groups kept on their previous
// TaskManager as long as it has chosen slots left.
func TestDecideWorkspace(t *testing.T) {
	ws := new(Workspace)
	rapid.Check(t, func(t *rapid.T) {
		vs, tms, opts := drawDecision(t)
		fresh, ok := Decide(vs, tms, opts)
		opts.Workspace = ws
		reused, rok := Decide(vs, tms, opts)
		if ok != rok || !reflect.DeepEqual(fresh, reused) {
			t.Fatalf("with a workspace %v, %v; without %v, %v", reused, rok, fresh, ok)
		}
		ids := map[string]bool{}
		for _, tm := range tms {
			ids[tm.ID] = true
		}
		if !ok || len(ids) < len(tms) {
			return // repeated ids: two entries may offer "the same" slot
		}
		free := map[SlotRef]bool{}
		for _, tm := range tms {
			for _, s := range tm.Free {
				free[SlotRef{tm.ID, s}] = true
			}
		}
		want := map[GroupIndex]bool{}
		for _, g := range groups(vs) {
			for i := range slices.Max(parallelismOf(fresh.Parallelism, vs, g.name)) {
				want[GroupIndex{g.name, i}] = true
			}
		}
		used := map[SlotRef]bool{}
		for _, a := range fresh.Assignments {
			if !free[a.Slot] || used[a.Slot] {
				t.Fatalf("assignment %v: slot not free or used twice", a)
			}
			used[a.Slot] = true
			if !want[a.GroupIndex] {
				t.Fatalf("assignment %v: no such execution group, or placed twice", a)
			}
			delete(want, a.GroupIndex)
		}
		if len(want) > 0 {
			t.Fatalf("execution groups %v not placed", want)
		}
		chosenOn := map[string]int{}
		for _, a := range fresh.Assignments {
			chosenOn[a.Slot.TaskManager]++
		}
		keptOn := map[string]int{}
		for _, a := range fresh.Assignments {
			if prev, ok := previousTM(opts.Previous, a.GroupIndex); ok && prev == a.Slot.TaskManager {
				keptOn[prev]++
			}
		}
		for _, a := range fresh.Assignments {
			prev, ok := previousTM(opts.Previous, a.GroupIndex)
			if ok && prev != a.Slot.TaskManager && keptOn[prev] < chosenOn[prev] {
				t.Fatalf("%v moved off %s although %d of its %d chosen slots went to others", a, prev,
					chosenOn[prev]-keptOn[prev], chosenOn[prev])
			}
		}
	})
}

// parallelismOf lists the decided parallelism of the vertices of a group.
func parallelismOf(p Parallelism, vs []Vertex, group string) []int {
	var out []int
	for _, v := range vs {
		if v.Group == group {
			out = append(out, p[v.ID])
		}
	}
	return out
}

// previousTM returns where an execution group ran last time.
func previousTM(previous map[string][]string, gi GroupIndex) (string, bool) {
	l := previous[gi.Group]
	if gi.Index >= len(l) || l[gi.Index] == "" {
		return "", false
	}
	return l[gi.Index], true
}
