package core_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/core/coretest"
)

// TestScenarios runs every script in testdata/ (see coretest.Runner for the commands).
// Regenerate the expected output with `go test ./core -run TestScenarios -rewrite`.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			r := &coretest.Runner{}
			coretest.RunTest(t, f, r.Handle)
		})
	}
}
