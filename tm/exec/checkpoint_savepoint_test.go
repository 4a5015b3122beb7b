package exec

import "testing"

// A savepoint never becomes the base of an incremental checkpoint: confirming its id (a
// stop-with-savepoint is confirmed) keeps the tables of the last confirmed checkpoint,
// which the next checkpoint lists again instead of uploading.
func TestSavepointConfirmKeepsTheIncrementalBase(t *testing.T) {
	s := newIncrementalState()
	base := map[string]StateHandle{"000007.sst": {Name: "j/shared/v-0-u-c4-000007.sst", Size: 10}}
	s.record(4, base)
	s.confirm(4)
	// Savepoint 5 uploads no tables (it writes the full state file): nothing recorded.
	s.confirm(5)
	got := s.reusable()
	if len(got) != 1 || got["000007.sst"] != base["000007.sst"] {
		t.Fatalf("reusable tables after confirming savepoint 5 = %v, want checkpoint 4's %v", got, base)
	}
}

// An attempt remembers the targets of its latest savepoints, by checkpoint id, from the
// trigger or a savepoint barrier alike.
func TestAttemptSavepointTargets(t *testing.T) {
	a := &attempt{}
	a.noteSavepoint(3, nil)
	if a.savepoint(3) != nil {
		t.Fatal("a checkpoint noted as a savepoint")
	}
	sp := SavepointTarget{Format: "CANONICAL", StorageURI: "file:///sp", Dir: "savepoint-ab-1"}
	a.noteSavepoint(4, &sp)
	if got := a.savepoint(4); got == nil || *got != sp {
		t.Fatalf("savepoint(4) = %v, want %v", got, sp)
	}
	if a.savepoint(5) != nil {
		t.Fatal("checkpoint 5 is no savepoint")
	}
	a.noteSavepoint(4+keptSavepoints, &sp)
	if a.savepoint(4) != nil || a.savepoint(4+keptSavepoints) == nil {
		t.Fatalf("targets kept: %v; want only the latest %d ids", a.savepoints, keptSavepoints)
	}
}

func TestSavepointBarrierWire(t *testing.T) {
	sp := SavepointTarget{Format: "CANONICAL", StorageURI: "hdfs://nn:8020/sp", Dir: "savepoint-0123ab-0123456789ab"}
	m, err := parseMessage(appendSavepointBarrier(nil, 12, 1700000000000, sp))
	if err != nil || m.tag != tagSavepointBarrier || m.id != 12 || m.ts != 1700000000000 || m.sp == nil || *m.sp != sp {
		t.Fatalf("parsed %+v, %v", m, err)
	}
	plain, err := parseMessage(appendBarrier(nil, 12, 5))
	if err != nil || plain.sp != nil {
		t.Fatalf("a checkpoint barrier parsed as %+v, %v", plain, err)
	}
	full := appendSavepointBarrier(nil, 12, 5, sp)
	for _, bad := range [][]byte{full[:len(full)-1], append(full, 0)} {
		if _, err := parseMessage(bad); err == nil {
			t.Errorf("%x parsed", bad)
		}
	}
}
