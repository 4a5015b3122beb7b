package exec

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// threadNice reads the calling thread's nice value from /proc (field 19 of its stat).
func threadNice(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count fields after its closing ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[16]) // field 19 is the 17th after the name
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLowerUploadPriority lowers an uploader's thread by 0, 3 and 25 nice steps (the last
// capped at 19) and reads the thread's nice value back from the kernel; the thread is
// locked to its goroutine and ends with it, so the test's other threads keep theirs.
func TestLowerUploadPriority(t *testing.T) {
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := 20 - raw // the process's nice value
	for _, inc := range []int{0, 3, 25} {
		type result struct{ set, read, before int }
		done := make(chan result)
		go func() {
			before := threadNice(t)
			set, err := lowerUploadPriority(inc)
			if err != nil {
				t.Error(err)
			}
			done <- result{set: set, read: threadNice(t), before: before}
		}()
		r := <-done
		want := min(r.before+inc, 19)
		if r.set != want || r.read != want {
			t.Errorf("+%d from nice %d (process %d): set %d, the kernel says %d; want %d", inc, r.before, base, r.set, r.read, want)
		}
	}
	if n := threadNice(t); n != base {
		t.Errorf("the test's own thread is at nice %d, the process at %d", n, base)
	}
}
