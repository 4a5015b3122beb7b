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
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("committed output in %s differs from the exact answer:\n got %v\nwant %v", dir, got, want)
	}
}
