package slotpool

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/core/allocator"
	"pgregory.net/rapid"
)

func assigned(refs ...allocator.SlotRef) []allocator.Assignment {
	out := make([]allocator.Assignment, len(refs))
	for i, r := range refs {
		out[i] = allocator.Assignment{Slot: r}
	}
	return out
}

func TestReserveAssigned(t *testing.T) {
	for _, tc := range []struct {
		name    string
		as      []allocator.Assignment
		wantN   int
		wantErr error
	}{
		{"all", assigned(ref("a1", 0), ref("a1", 1), ref("b1", 0)), 3, nil},
		{"none", nil, 0, nil},
		{"unknown task manager", assigned(ref("a1", 0), ref("zz", 0)), 1, ErrUnknown},
		{"slot out of range", assigned(ref("a1", 0), ref("a1", 2)), 1, ErrUnknown},
		{"negative slot", assigned(ref("a1", -1)), 0, ErrUnknown},
		{"same slot twice", assigned(ref("a1", 0), ref("b1", 1), ref("a1", 0)), 2, ErrNotFree},
		{"blocked node", assigned(ref("a1", 1), ref("c1", 0)), 1, ErrBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocked := blockedSet{}
			p := New(blocked.fn())
			for _, id := range []string{"a1", "b1", "c1"} {
				if err := p.Register(t0, id, id[:1], 2); err != nil {
					t.Fatal(err)
				}
			}
			blocked["c"] = true
			n, err := p.ReserveAssigned(tc.as)
			if n != tc.wantN || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("ReserveAssigned = %d, %v; want %d, %v", n, err, tc.wantN, tc.wantErr)
			}
			reserved := 0
			for _, in := range p.Infos() {
				reserved += in.Reserved
			}
			if reserved != n {
				t.Fatalf("%d slots reserved after ReserveAssigned returned %d", reserved, n)
			}
		})
	}
}

func TestFreeAll(t *testing.T) {
	blocked := blockedSet{}
	p := New(blocked.fn())
	for _, id := range []string{"a1", "a2", "b1"} {
		if err := p.Register(t0, id, id[:1], 2); err != nil {
			t.Fatal(err)
		}
	}
	held := []allocator.SlotRef{ref("a1", 0), ref("a1", 1), ref("b1", 0), ref("a2", 1), ref("b1", 1)}
	if n, err := p.ReserveAssigned(assigned(held...)); err != nil {
		t.Fatalf("ReserveAssigned = %d, %v", n, err)
	}
	blocked["a"] = true
	p.Remove("b1")
	later := t0.Add(time.Minute)
	refs := append(slices.Clone(held), ref("a2", 1), ref("a2", 7))
	registered, release, err := p.FreeAll(later, slices.Values(refs))
	if registered != 5 {
		t.Errorf("FreeAll saw %d slots on registered task managers, want 5 (b1's two skipped)", registered)
	}
	if want := []string{"a1", "a2"}; !slices.Equal(release, want) {
		t.Errorf("FreeAll release = %v, want %v (in the order they emptied)", release, want)
	}
	if !errors.Is(err, ErrNotReserved) || !errors.Is(err, ErrUnknown) {
		t.Errorf("FreeAll error = %v, want the second free of a2/1 (not reserved) and a2/7 (unknown)", err)
	}
	// a1's freed slots are released (its node is blocked); a2 keeps the one slot it never
	// lent, until ReleaseBlocked.
	for _, in := range p.Infos() {
		if want := map[string]int{"a1": 0, "a2": 1}[in.ID]; in.Reserved != 0 || in.Free != want {
			t.Errorf("%s: %d reserved, %d free after FreeAll on a blocked node, want 0, %d", in.ID, in.Reserved, in.Free, want)
		}
	}
	// Freed on a blocked node, the slots are released, not free: nothing to plan on.
	if got := p.FreeSlots(nil); len(got) != 0 {
		t.Errorf("FreeSlots = %v, want none", got)
	}
}

func TestFreeAllUnblockedKeepsSlotsFree(t *testing.T) {
	p := New(blockedSet{}.fn())
	if err := p.Register(t0, "tm", "n", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReserveAssigned(assigned(ref("tm", 0), ref("tm", 2))); err != nil {
		t.Fatal(err)
	}
	registered, release, err := p.FreeAll(t0, slices.Values([]allocator.SlotRef{ref("tm", 2), ref("tm", 0)}))
	if registered != 2 || release != nil || err != nil {
		t.Fatalf("FreeAll = %d, %v, %v; want 2, nil, nil", registered, release, err)
	}
	if got := p.FreeSlots(nil); len(got) != 1 || !slices.Equal(got[0].Free, []int{0, 1, 2}) {
		t.Fatalf("FreeSlots = %v, want tm with 0,1,2", got)
	}
}

// TestFreeSlotsReusesBuffer: a buffer from an earlier call is reused, and the result is
// the same as with a fresh buffer whatever changed in between.
func TestFreeSlotsReusesBuffer(t *testing.T) {
	p := New(blockedSet{}.fn())
	for i := range 4 {
		if err := p.Register(t0, fmt.Sprintf("tm%d", i), "n", 2+i); err != nil {
			t.Fatal(err)
		}
	}
	buf := p.FreeSlots(nil)
	if _, err := p.ReserveAssigned(assigned(ref("tm1", 0), ref("tm3", 4))); err != nil {
		t.Fatal(err)
	}
	p.Remove("tm2")
	if err := p.Register(t0, "tm9", "n", 9); err != nil {
		t.Fatal(err)
	}
	got := p.FreeSlots(buf)
	want := p.FreeSlots(nil)
	if len(got) != len(want) {
		t.Fatalf("FreeSlots(buf) = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].ID != want[i].ID || !slices.Equal(got[i].Free, want[i].Free) {
			t.Fatalf("FreeSlots(buf)[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestLookupMatchesModel drives registrations, removals and lookups in any order and
// checks every answer (which goes through the pool's lookup cache) against a plain map.
func TestLookupMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := New(blockedSet{}.fn())
		model := map[string]string{} // id → node
		id := rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "f"})
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			tm := id.Draw(t, "id")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				err := p.Register(t0, tm, "n"+tm, 1)
				if _, dup := model[tm]; dup != errors.Is(err, ErrDuplicate) {
					t.Fatalf("Register(%s) = %v with model %v", tm, err, model)
				}
				model[tm] = "n" + tm
			case 1:
				_, ok := model[tm]
				if got := p.Remove(tm); got != ok {
					t.Fatalf("Remove(%s) = %v, want %v", tm, got, ok)
				}
				delete(model, tm)
			case 2:
				node, ok := p.Node(tm)
				if want, wok := model[tm]; ok != wok || node != want {
					t.Fatalf("Node(%s) = %q, %v; want %q, %v", tm, node, ok, want, wok)
				}
			default:
				_, ok := model[tm]
				if err := p.Reserve(ref(tm, 0)); ok != (err == nil || errors.Is(err, ErrNotFree)) {
					t.Fatalf("Reserve(%s/0) = %v with %s registered: %v", tm, err, tm, ok)
				}
			}
			ids := make([]string, 0, len(model))
			for _, in := range p.Infos() {
				ids = append(ids, in.ID)
			}
			if !slices.IsSorted(ids) || len(ids) != len(model) || p.Len() != len(model) {
				t.Fatalf("Infos ids %v, want the %d of %v sorted", ids, len(model), model)
			}
		}
	})
}
