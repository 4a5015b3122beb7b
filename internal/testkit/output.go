package testkit

import (
	"reflect"

	"github.com/tidestream/tide/examples"
)

// CheckExactOutput fails t unless the checkable job run with args committed exactly its
// expected output into dir: nothing lost, nothing twice.
func CheckExactOutput(t Fataler, dir string, args []string) {
	t.Helper()
	got, err := examples.ReadCommittedOutput(dir)
	if err != nil {
		t.Fatalf("reading the committed output in %s: %v", dir, err)
	}
	want, err := examples.ExpectedOutput(args)
	if err != nil {
		t.Fatalf("the expected output of %q: %v", args, err)
	}
	if reflect.DeepEqual(got, want) {
		return
	}
	if len(got)+len(want) <= 200 {
		t.Fatalf("committed output in %s differs from the exact answer:\n got %v\nwant %v", dir, got, want)
	}
	// A 10M-key run's lines would make a message of hundreds of MB: name the first difference.
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end)"
	}
	t.Fatalf("committed output in %s differs from the exact answer: %d lines, want %d; first difference at sorted line %d: got %q, want %q",
		dir, len(got), len(want), i, line(got), line(want))
}
