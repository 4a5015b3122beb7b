package localstate

import "testing"

// A held entry survives Confirm past its checkpoint (its files stay findable for the next
// copy to link) until released; DropJob deletes it regardless.
func TestHoldKeepsAnEntryThroughConfirm(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	k3 := Key{Job: "job/1", Vertex: "map", KeyGroupStart: 0, KeyGroupEnd: 63, Checkpoint: 3}
	k4 := Key{Job: "job/1", Vertex: "map", KeyGroupStart: 64, KeyGroupEnd: 127, Checkpoint: 4}
	if err := s.Put(k3, []File{{Handle: "job/1/shared/a.sst", Path: writeTemp(t, src, "a.sst", "aaaa")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(k4, []File{{Handle: "job/1/shared/b.sst", Path: writeTemp(t, src, "b.sst", "bbbb")}}); err != nil {
		t.Fatal(err)
	}
	s.Hold(k3)
	s.Hold(k3) // holds nest
	s.Confirm("job/1", 5)
	if _, ok := s.Find("job/1", "map", "job/1/shared/a.sst", 4); !ok {
		t.Fatal("the held entry of checkpoint 3 is gone after Confirm(5)")
	}
	if _, ok := s.Find("job/1", "map", "job/1/shared/b.sst", 4); ok {
		t.Fatal("the entry of checkpoint 4, not held, survives Confirm(5)")
	}
	s.Release(k3)
	s.Confirm("job/1", 5)
	if _, ok := s.Find("job/1", "map", "job/1/shared/a.sst", 4); !ok {
		t.Fatal("the entry of checkpoint 3, still held once, is gone after Confirm(5)")
	}
	s.Release(k3)
	s.Confirm("job/1", 5)
	if _, ok := s.Find("job/1", "map", "job/1/shared/a.sst", 4); ok {
		t.Fatal("the entry of checkpoint 3 survives Confirm(5) after its last Release")
	}
	s.Hold(k4) // held but gone: DropJob and Release of a missing entry are harmless
	s.DropJob("job/1")
	s.Release(k4)
}
