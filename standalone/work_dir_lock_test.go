package standalone

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLockWorkDir: a work directory has one local cluster at a time; the second is refused
// with the holder's pid and what to do, and the directory is free again once released.
func TestLockWorkDir(t *testing.T) {
	dir := t.TempDir()
	first, err := lockWorkDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockWorkDir(dir)
	if err == nil {
		t.Fatal("a second cluster got the work directory the first holds")
	}
	if !errors.Is(err, ErrWorkDirInUse) {
		t.Errorf("error %q is not ErrWorkDirInUse", err)
	}
	for _, want := range []string{"work directory in use by another local cluster: " + dir + " (process " + strconv.Itoa(os.Getpid()) + ")", "its own --work-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	first.Close()
	second, err := lockWorkDir(dir)
	if err != nil {
		t.Fatalf("the work directory stays taken after its cluster released it: %v", err)
	}
	second.Close()
}
