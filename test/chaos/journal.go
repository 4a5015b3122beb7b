package chaos

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Journal prints what a chaos run does, one line per event, each with the wall-clock time
// (UTC, to match the AM's and TaskManagers' logs) and the time since the run started, and
// keeps every line for the test's failure message.
type Journal struct {
	mu    sync.Mutex
	w     io.Writer
	seed  uint64
	start time.Time
	lines []string
}

// NewJournal starts the journal of seed's run on w and prints the seed and how to replay it.
func NewJournal(w io.Writer, seed uint64, replay string) *Journal {
	j := &Journal{w: w, seed: seed, start: time.Now()}
	j.Printf("chaos seed %d (replay: %s)", seed, replay)
	return j
}

// Printf records one line.
func (j *Journal) Printf(format string, args ...any) {
	now := time.Now()
	line := fmt.Sprintf("%s +%7.3fs seed=%d %s", now.UTC().Format("15:04:05.000"), now.Sub(j.start).Seconds(), j.seed, fmt.Sprintf(format, args...))
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, line)
	fmt.Fprintln(j.w, line)
}

// String is every line so far.
func (j *Journal) String() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.lines, "\n")
}
