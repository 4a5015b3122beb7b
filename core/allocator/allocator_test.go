package allocator

import (
	"fmt"
	"testing"
)

func TestDetermineParallelism(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vertices []Vertex
		slots    int
		want     Parallelism // nil: insufficient
	}{
		{"minimum slots", []Vertex{{"a", "g", 1, 4}, {"b", "g", 1, 2}}, 1, Parallelism{"a": 1, "b": 1}},
		{"many slots capped by upper", []Vertex{{"a", "g", 1, 4}, {"b", "g", 1, 2}}, 50, Parallelism{"a": 4, "b": 2}},
		{"shared group", []Vertex{{"a", "g", 1, 4}, {"b", "g", 1, 2}}, 3, Parallelism{"a": 3, "b": 2}},
		{"two groups split evenly", []Vertex{{"a", "g1", 1, 10}, {"b", "g2", 1, 10}}, 6, Parallelism{"a": 3, "b": 3}},
		{"narrow group first", []Vertex{{"a", "g1", 1, 2}, {"b", "g2", 1, 10}}, 8, Parallelism{"a": 2, "b": 6}},
		{"fewer slots than groups", []Vertex{{"a", "g1", 1, 2}, {"b", "g2", 1, 2}}, 1, nil},
		{"lower bounds respected", []Vertex{{"a", "g1", 3, 5}, {"b", "g2", 1, 5}}, 5, Parallelism{"a": 3, "b": 2}},
		{"equal bounds", []Vertex{{"a", "g1", 3, 3}, {"b", "g2", 2, 2}}, 10, Parallelism{"a": 3, "b": 2}},
		{"insufficient for lower bound", []Vertex{{"a", "g1", 3, 5}, {"b", "g2", 2, 5}}, 4, nil},
		{"no slots", []Vertex{{"a", "g", 1, 1}}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DetermineParallelism(tc.vertices, tc.slots)
			if tc.want == nil {
				if ok {
					t.Fatalf("DetermineParallelism(%d slots) = %v, want insufficient", tc.slots, got)
				}
				return
			}
			if !ok || !got.Equal(tc.want) {
				t.Fatalf("DetermineParallelism(%d slots) = %v, %v; want %v", tc.slots, got, ok, tc.want)
			}
		})
	}
}

func TestRequiredAndMinimumSlots(t *testing.T) {
	vs := []Vertex{{"a", "g1", 2, 4}, {"b", "g1", 3, 3}, {"c", "g2", 1, 7}}
	if got := RequiredSlots(vs); got != 11 {
		t.Errorf("RequiredSlots = %d, want 11", got)
	}
	if got := MinimumSlots(vs); got != 4 {
		t.Errorf("MinimumSlots = %d, want 4", got)
	}
}

func tms(slotsPer ...int) []TaskManager {
	var out []TaskManager
	for i, n := range slotsPer {
		tm := TaskManager{ID: fmt.Sprintf("tm%d", i)}
		for s := 0; s < n; s++ {
			tm.Free = append(tm.Free, s)
		}
		out = append(out, tm)
	}
	return out
}

func TestDecideSlotSharing(t *testing.T) {
	vs := []Vertex{{"a", "g", 1, 3}, {"b", "g", 1, 2}, {"c", "h", 1, 1}}
	plan, ok := Decide(vs, tms(2, 2), Options{PreferMinimalTaskManagers: true})
	if !ok {
		t.Fatal("Decide: insufficient, want a plan")
	}
	if !plan.Parallelism.Equal(Parallelism{"a": 3, "b": 2, "c": 1}) {
		t.Fatalf("parallelism %v", plan.Parallelism)
	}
	seen := map[SlotRef]bool{}
	for _, a := range plan.Assignments {
		if seen[a.Slot] {
			t.Fatalf("slot %v assigned twice", a.Slot)
		}
		seen[a.Slot] = true
	}
	if len(plan.Assignments) != 4 {
		t.Fatalf("%d assignments, want 4 (3 for g, 1 for h)", len(plan.Assignments))
	}
}

func TestDecidePackVersusSpread(t *testing.T) {
	vs := []Vertex{{"a", "g", 1, 4}}
	perTM := func(p Plan) map[string]int {
		m := map[string]int{}
		for _, a := range p.Assignments {
			m[a.Slot.TaskManager]++
		}
		return m
	}
	packed, _ := Decide(vs, tms(2, 4, 4), Options{PreferMinimalTaskManagers: true})
	if got := perTM(packed); len(got) != 1 || got["tm1"] != 4 {
		t.Errorf("packed onto %v, want all 4 on tm1 (fullest, lowest id)", got)
	}
	spread, _ := Decide(vs, tms(2, 4, 4), Options{})
	if got := perTM(spread); got["tm0"] != 2 || got["tm1"] != 1 || got["tm2"] != 1 {
		t.Errorf("spread onto %v, want tm0:2 tm1:1 tm2:1", got)
	}
}

func TestDecideKeepsPreviousPlacement(t *testing.T) {
	vs := []Vertex{{"a", "g", 1, 3}}
	prev := map[string][]string{"g": {"tm2", "tm2", "tm0"}}
	plan, ok := Decide(vs, tms(2, 2, 2), Options{PreferMinimalTaskManagers: true, Previous: prev})
	if !ok {
		t.Fatal("insufficient")
	}
	for _, a := range plan.Assignments {
		if want := prev[a.Group][a.Index]; a.Slot.TaskManager != want {
			t.Errorf("%v placed on %s, want %s (previous placement)", a.GroupIndex, a.Slot.TaskManager, want)
		}
	}
}

func TestDecideInsufficient(t *testing.T) {
	if p, ok := Decide([]Vertex{{"a", "g", 3, 3}}, tms(1, 1), Options{}); ok {
		t.Fatalf("Decide = %v, want insufficient with 2 slots for lower bound 3", p)
	}
}

// benchDecision plans 10 vertices, each in its own slot-sharing group with an upper bound
// of a tenth of the slots, on tmCount TaskManagers × 10 slots: tmCount×10 subtasks, one per slot.
func benchDecision(b *testing.B, tmCount int) {
	const slotsPer, verticesN = 10, 10
	var vs []Vertex
	for i := 0; i < verticesN; i++ {
		vs = append(vs, Vertex{ID: fmt.Sprintf("v%d", i), Group: fmt.Sprintf("g%d", i), Lower: 1, Upper: tmCount * slotsPer / verticesN})
	}
	free := tms(make([]int, tmCount)...)
	for i := range free {
		for s := 0; s < slotsPer; s++ {
			free[i].Free = append(free[i].Free, s)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, ok := Decide(vs, free, Options{PreferMinimalTaskManagers: true}); !ok {
			b.Fatal("insufficient")
		}
	}
}

// BenchmarkDecision10k: 10,000 subtasks (10 vertices × 1,000) on 1,000 TaskManagers × 10 slots.
func BenchmarkDecision10k(b *testing.B) { benchDecision(b, 1000) }

// BenchmarkDecision20k: twice the subtasks and slots; its cost over Decision10k's is the ratio.
func BenchmarkDecision20k(b *testing.B) { benchDecision(b, 2000) }
