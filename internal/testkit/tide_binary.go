package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TideBuild is one build of cmd/tide for a test package: Bin receives the binary's path and
// LDFlags are its -ldflags ("" for none).
type TideBuild struct {
	Bin     *string
	LDFlags string
}

// MainWithTide is the TestMain of test packages that run the tide binary:
//
//	func TestMain(m *testing.M) { testkit.MainWithTide(m, testkit.TideBuild{Bin: &tideBin}) }
//
// It builds cmd/tide once per build into a temporary directory, runs the tests, removes the
// directory and exits with their status. A failed build exits with status 1 and the
// compiler's output on stderr.
func MainWithTide(m *testing.M, builds ...TideBuild) {
	dir, err := os.MkdirTemp("", "tide-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i, b := range builds {
		*b.Bin = filepath.Join(dir, fmt.Sprintf("tide-%d", i))
		if i == 0 {
			*b.Bin = filepath.Join(dir, "tide")
		}
		if err := BuildTide(*b.Bin, b.LDFlags); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// BuildTide builds cmd/tide to out with ldflags ("" for none), the compiler's output going
// to stderr.
func BuildTide(out, ldflags string) error {
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", out, "github.com/tidestream/tide/cmd/tide")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", out, err)
	}
	return nil
}
