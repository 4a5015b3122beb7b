package slotpool

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type blockedSet map[string]bool

func (b blockedSet) fn() BlockedFunc { return func(n string) bool { return b[n] } }

func ref(tm string, i int) allocator.SlotRef { return allocator.SlotRef{TaskManager: tm, Index: i} }

func TestRegisterReserveFree(t *testing.T) {
	blocked := blockedSet{"bad": true}
	p := New(blocked.fn())
	for _, tc := range []struct {
		id, node string
		slots    int
		want     error
	}{
		{"tm1", "n1", 2, nil},
		{"tm1", "n1", 2, ErrDuplicate},
		{"tm2", "bad", 2, ErrBlocked},
		{"tm3", "n3", 3, nil},
	} {
		if err := p.Register(t0, tc.id, tc.node, tc.slots); !errors.Is(err, tc.want) {
			t.Fatalf("Register(%s on %s) = %v, want %v", tc.id, tc.node, err, tc.want)
		}
	}
	if u, f := p.Counts(); u != 5 || f != 5 {
		t.Fatalf("Counts = %d,%d want 5,5", u, f)
	}
	if err := p.Reserve(ref("tm1", 0)); err != nil {
		t.Fatal(err)
	}
	if err := p.Reserve(ref("tm1", 0)); !errors.Is(err, ErrNotFree) {
		t.Fatalf("second Reserve = %v, want ErrNotFree", err)
	}
	if err := p.Reserve(ref("tm9", 0)); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Reserve unknown = %v, want ErrUnknown", err)
	}
	if _, err := p.Free(t0, ref("tm1", 1)); !errors.Is(err, ErrNotReserved) {
		t.Fatalf("Free of a free slot = %v, want ErrNotReserved", err)
	}
	got := p.FreeSlots(nil)
	want := []allocator.TaskManager{{ID: "tm1", Free: []int{1}}, {ID: "tm3", Free: []int{0, 1, 2}}}
	if len(got) != 2 || got[0].ID != want[0].ID || !slices.Equal(got[0].Free, want[0].Free) || !slices.Equal(got[1].Free, want[1].Free) {
		t.Fatalf("FreeSlots = %v, want %v", got, want)
	}
	if rel, err := p.Free(t0, ref("tm1", 0)); err != nil || rel {
		t.Fatalf("Free = %v,%v want false,nil", rel, err)
	}
	if u, f := p.Counts(); u != 5 || f != 5 {
		t.Fatalf("Counts after free = %d,%d want 5,5", u, f)
	}
}

func TestBlockedNode(t *testing.T) {
	blocked := blockedSet{}
	p := New(blocked.fn())
	for _, id := range []string{"a1", "a2", "b1"} {
		if err := p.Register(t0, id, id[:1], 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Reserve(ref("a1", 0)); err != nil {
		t.Fatal(err)
	}
	blocked["a"] = true
	idle, busy := p.ReleaseBlocked("a")
	if !slices.Equal(idle, []string{"a2"}) || !slices.Equal(busy, []string{"a1"}) {
		t.Fatalf("ReleaseBlocked = idle %v busy %v, want [a2] [a1]", idle, busy)
	}
	if u, f := p.Counts(); u != 3 || f != 2 {
		t.Fatalf("Counts = %d,%d, want 3,2: only the reserved slot on the blocked node counts", u, f)
	}
	for _, tm := range p.FreeSlots(nil) {
		if tm.ID != "b1" {
			t.Fatalf("free slot offered on blocked TaskManager %s", tm.ID)
		}
	}
	if err := p.Reserve(ref("a1", 1)); err == nil {
		t.Fatal("reserved a released slot on a blocked node")
	}
	rel, err := p.Free(t0, ref("a1", 0))
	if err != nil || !rel {
		t.Fatalf("Free on blocked node = %v,%v; want release of the whole TaskManager", rel, err)
	}
	if _, f := p.Counts(); f != 2 {
		t.Fatalf("freed slot on a blocked node returned to the pool")
	}
}

func TestIdleTaskManagers(t *testing.T) {
	p := New(blockedSet{}.fn())
	for _, id := range []string{"tm1", "tm2", "tm3"} {
		if err := p.Register(t0, id, "n-"+id, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Reserve(ref("tm2", 0)); err != nil {
		t.Fatal(err)
	}
	const timeout = 10 * time.Second
	for _, tc := range []struct {
		name     string
		at       time.Duration
		required int
		want     []string
	}{
		{"too early", 9 * time.Second, 0, nil},
		{"both idle ones", 10 * time.Second, 0, []string{"tm1", "tm3"}},
		{"keep enough for requirement", 10 * time.Second, 3, []string{"tm1"}},
		{"unbounded keeps all", time.Hour, -1, nil},
	} {
		if got := p.IdleTaskManagers(t0.Add(tc.at), timeout, tc.required); !slices.Equal(got, tc.want) {
			t.Errorf("%s: IdleTaskManagers = %v, want %v", tc.name, got, tc.want)
		}
	}
	if d, ok := p.NextIdleDeadline(timeout); !ok || !d.Equal(t0.Add(timeout)) {
		t.Errorf("NextIdleDeadline = %v,%v", d, ok)
	}
}

func TestHeartbeats(t *testing.T) {
	p := New(blockedSet{}.fn())
	_ = p.Register(t0, "tm1", "n1", 1)
	_ = p.Register(t0, "tm2", "n2", 1)
	if err := p.Heartbeat(t0.Add(30*time.Second), "tm2"); err != nil {
		t.Fatal(err)
	}
	if err := p.Heartbeat(t0, "nope"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Heartbeat unknown = %v", err)
	}
	if got := p.HeartbeatExpired(t0.Add(50*time.Second), 50*time.Second); !slices.Equal(got, []string{"tm1"}) {
		t.Fatalf("HeartbeatExpired = %v, want [tm1]", got)
	}
	if d, _ := p.NextHeartbeatDeadline(50 * time.Second); !d.Equal(t0.Add(50 * time.Second)) {
		t.Fatalf("NextHeartbeatDeadline = %v", d)
	}
	if !p.Remove("tm1") || p.Remove("tm1") || p.Len() != 1 {
		t.Fatal("Remove bookkeeping wrong")
	}
}

// TestKeepBlocked: with KeepBlocked a TaskManager on a blocked node registers, its slots
// stay free but unusable while the node is blocked (freed ones too), nothing asks for its
// release, and they are usable again once the block ends.
func TestKeepBlocked(t *testing.T) {
	blocked := blockedSet{"n2": true}
	p := New(blocked.fn())
	p.KeepBlocked = true
	now := time.Unix(0, 0)
	if err := p.Register(now, "tm1", "n1", 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Register(now, "tm2", "n2", 2); err != nil {
		t.Fatalf("register on a blocked node with KeepBlocked: %v", err)
	}
	if usable, free := p.Counts(); usable != 2 || free != 2 {
		t.Fatalf("counts with n2 blocked = %d usable, %d free; want 2, 2", usable, free)
	}
	if got := p.FreeSlots(nil); len(got) != 1 || got[0].ID != "tm1" {
		t.Fatalf("free slots with n2 blocked = %+v, want tm1's only", got)
	}
	delete(blocked, "n2")
	if err := p.Reserve(ref("tm2", 0)); err != nil {
		t.Fatal(err)
	}
	blocked["n2"] = true
	if idle, busy := p.ReleaseBlocked("n2"); len(idle) != 0 || len(busy) != 1 {
		t.Fatalf("ReleaseBlocked = idle %v busy %v, want tm2 busy", idle, busy)
	}
	release, err := p.Free(now, ref("tm2", 0))
	if err != nil || release {
		t.Fatalf("Free on a blocked node with KeepBlocked = %v, %v; want the slot kept, no release", release, err)
	}
	delete(blocked, "n2")
	if usable, free := p.Counts(); usable != 4 || free != 4 {
		t.Fatalf("counts after the block = %d usable, %d free; want 4, 4", usable, free)
	}
}
