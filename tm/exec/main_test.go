package exec_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/tidestream/tide/stream"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Every keyed record the tests send checks the key group it carries against its key's
	// hash (benchmarks measure without the check, as tide runs).
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		stream.VerifyCarriedKeyGroups(true)
	}
	goleak.VerifyTestMain(m)
}
