package worker

import "testing"

func TestAttemptSpace(t *testing.T) {
	a, b := newAttemptSpace("0a1b2c3d"), newAttemptSpace("4e5f6a7b")
	for _, attempt := range []int64{1, 2, 17, 1 << 20} {
		la, lb := a.local(attempt), b.local(attempt)
		if la == lb {
			t.Fatalf("attempt %d of two AMs maps to the same local id %d", attempt, la)
		}
		if la <= 0 || lb <= 0 {
			t.Fatalf("local ids must stay positive: %d %d", la, lb)
		}
		if a.am(la) != attempt || b.am(lb) != attempt {
			t.Fatalf("round trip of attempt %d: %d, %d", attempt, a.am(la), b.am(lb))
		}
	}
	if none := newAttemptSpace(""); none.local(5) != 5 || none.am(5) != 5 {
		t.Fatalf("without a run id attempts must pass through unchanged")
	}
}
