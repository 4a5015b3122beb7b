package state

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidestream/tide/conf"
)

// The RSS measurement runs in a child process of the test binary, alone, so its peak
// resident size (VmHWM) is that of a TaskManager's state machinery and nothing else.
const (
	rssChildEnv = "TIDE_TEST_RSS_CHILD"
	// TIDE_STATE_RSS_BYTES and TIDE_STATE_RSS_PROCESS size the run (make state-rss: 4 GiB
	// of state in a 1 GiB TaskManager); the defaults keep go test ./... quick.
	rssBytesEnv   = "TIDE_STATE_RSS_BYTES"
	rssProcessEnv = "TIDE_STATE_RSS_PROCESS"
)

// TestManagedMemoryBoundsRSS writes more keyed state into Pebble than the TaskManager's
// process size, the way a TaskManager with two slots does (managed memory: 0.4 of the
// process size shared by both instances, Go's memory limit at the rest), reads it back
// at random, and reports the peak RSS against the configured process size, which it must
// not exceed.
func TestManagedMemoryBoundsRSS(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector RSS is mostly shadow memory, not a TaskManager's; make state-large measures it without")
	}
	stateBytes := envSize(t, rssBytesEnv, 128<<20)
	process := envSize(t, rssProcessEnv, 128<<20)
	cmd := exec.Command(os.Args[0], "-test.run=^TestManagedMemoryBoundsRSS$")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+t.TempDir(), rssBytesEnv+"="+strconv.FormatInt(stateBytes, 10),
		rssProcessEnv+"="+strconv.FormatInt(process, 10))
	if os.Getenv(rssChildEnv) != "" {
		rssChild(t)
		return
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var hwm, disk int64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "RSS ") {
			t.Log(line)
			if _, err := fmt.Sscanf(line, "RSS peak=%d disk=%d", &hwm, &disk); err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
		}
	}
	if hwm == 0 {
		t.Fatalf("child reported no RSS:\n%s", out)
	}
	t.Logf("state %d MiB written (%d MiB on disk): peak RSS %d MiB of a configured process size of %d MiB (%.0f%%)",
		stateBytes>>20, disk>>20, hwm>>20, process>>20, 100*float64(hwm)/float64(process))
	if hwm > process {
		t.Fatalf("peak RSS %d MiB exceeds the configured process size %d MiB", hwm>>20, process>>20)
	}
}

func envSize(t *testing.T, key string, def int64) int64 {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	m, err := conf.ParseMemorySize(v)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return m.Bytes()
}

// rssChild is the child: a TaskManager's pebble instances under managed memory.
func rssChild(t *testing.T) {
	dir := os.Getenv(rssChildEnv)
	stateBytes := envSize(t, rssBytesEnv, 0)
	process := envSize(t, rssProcessEnv, 0)
	managed := int64(0.4 * float64(process))
	const slots, valueLen = 2, 1000
	if OffHeap {
		debug.SetMemoryLimit(process - managed)
	} else {
		debug.SetMemoryLimit(process)
	}
	mem, err := NewMemory(managed, slots)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	perSlot := stateBytes / slots / valueLen
	var wg sync.WaitGroup
	var disk atomic.Int64 // measured while the instances are open (Close removes them)
	errs := make(chan error, slots)
	for s := range slots {
		b, err := OpenPebble(PebbleOptions{Dir: dir, Name: fmt.Sprintf("rss-%d", s), Memory: mem})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.Close()
			err := fillAndRead(b, perSlot, valueLen, uint64(s))
			disk.Add(int64(b.db.Metrics().DiskSpaceUsage()))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("RSS peak=%d disk=%d current=%d\n", procStatus(t, "VmHWM"), disk.Load(), procStatus(t, "VmRSS"))
}

// fillAndRead writes n random entries of valueLen bytes (random order: compactions run),
// then reads n/10 back at random.
func fillAndRead(b *PebbleBackend, n int64, valueLen int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	val := make([]byte, valueLen)
	key := make([]byte, 8)
	for i := range n {
		for j := 0; j+8 <= len(val); j += 8 {
			binary.LittleEndian.PutUint64(val[j:], rng.Uint64())
		}
		binary.BigEndian.PutUint64(key, uint64(i)*0x9E3779B97F4A7C15)
		if err := b.Put(int(i%128), "s", key, val); err != nil {
			return err
		}
	}
	for range n / 10 {
		i := rng.Int64N(n)
		binary.BigEndian.PutUint64(key, uint64(i)*0x9E3779B97F4A7C15)
		if _, ok, err := b.Get(int(i%128), "s", key); err != nil || !ok {
			return fmt.Errorf("reading back entry %d: found=%v %w", i, ok, err)
		}
	}
	return nil
}

// procStatus reads a size field (kB) of /proc/self/status in bytes.
func procStatus(t *testing.T, field string) int64 {
	f, err := os.Open(filepath.Join("/proc", "self", "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
