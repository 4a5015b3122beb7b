package exec

import (
	"runtime"
	"sync"
	"testing"
)

// TestReserveUploadProc checks that each running low-priority upload adds one P and gives
// it back when it ends (once, however often release is called), also when uploads of
// several subtasks overlap.
func TestReserveUploadProc(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	r1 := reserveUploadProc()
	if n := runtime.GOMAXPROCS(0); n != base+1 {
		t.Fatalf("one upload: GOMAXPROCS %d, want %d", n, base+1)
	}
	var wg sync.WaitGroup
	releases := make([]func(), 4)
	for i := range releases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			releases[i] = reserveUploadProc()
		}()
	}
	wg.Wait()
	if n := runtime.GOMAXPROCS(0); n != base+5 {
		t.Fatalf("five uploads: GOMAXPROCS %d, want %d", n, base+5)
	}
	for _, r := range releases {
		r()
		r()
	}
	r1()
	if n := runtime.GOMAXPROCS(0); n != base {
		t.Fatalf("after the uploads: GOMAXPROCS %d, want %d", n, base)
	}
}
