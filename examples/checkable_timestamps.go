package examples

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidestream/tide/stream"
)

// TimestampEvery is the spacing of the numbers CheckableCount's --timestamps output holds:
// every TimestampEvery-th number of the sequence, each with the wall-clock time at which its
// sink subtask wrote it.
const TimestampEvery = 100

// timestampSink adds the --timestamps output: the numbers n with n % TimestampEvery == 0,
// written by an exactly-once file sink as "n,unix-milliseconds" (the time the sink wrote
// the line). The committed output holds each such number once, so it shows both that no
// record was lost or duplicated and when records reached the sink: a stretch with no
// records flowing shows up as a gap between consecutive times.
func timestampSink(nums stream.DataStream[int64], dir string) {
	ticks := stream.Filter(nums, "every-100th", func(v int64) bool { return v%TimestampEvery == 0 })
	stream.FileSink(ticks, "timestamps", dir, func(v int64) string {
		return strconv.FormatInt(v, 10) + "," + strconv.FormatInt(time.Now().UnixMilli(), 10)
	})
}

// Stamp is one line of the --timestamps output.
type Stamp struct {
	N  int64
	At time.Time
}

// ReadCommittedTimestamps reads the committed --timestamps output in dir (as given to the
// job), ordered by time.
func ReadCommittedTimestamps(dir string) ([]Stamp, error) {
	lines, err := ReadCommittedOutput(dir)
	if err != nil {
		return nil, err
	}
	stamps := make([]Stamp, 0, len(lines))
	for _, l := range lines {
		n, ms, ok := strings.Cut(l, ",")
		v, err1 := strconv.ParseInt(n, 10, 64)
		t, err2 := strconv.ParseInt(ms, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("timestamps output %s: line %q is not \"number,unix-milliseconds\"", dir, l)
		}
		stamps = append(stamps, Stamp{N: v, At: time.UnixMilli(t)})
	}
	slices.SortStableFunc(stamps, func(a, b Stamp) int { return a.At.Compare(b.At) })
	return stamps, nil
}

// CheckTimestamps checks that stamps (a finished run's --timestamps output) hold every
// TimestampEvery-th number of 1..records exactly once: none lost, none committed twice.
func CheckTimestamps(stamps []Stamp, records int64) error {
	seen := make(map[int64]bool, len(stamps))
	for _, s := range stamps {
		if s.N%TimestampEvery != 0 || s.N < 1 || s.N > records {
			return fmt.Errorf("timestamps output: number %d is not a multiple of %d in 1..%d", s.N, TimestampEvery, records)
		}
		if seen[s.N] {
			return fmt.Errorf("timestamps output: number %d committed twice", s.N)
		}
		seen[s.N] = true
	}
	if want := records / TimestampEvery; int64(len(seen)) != want {
		var missing []int64
		for v := int64(TimestampEvery); v <= records && len(missing) < 10; v += TimestampEvery {
			if !seen[v] {
				missing = append(missing, v)
			}
		}
		return fmt.Errorf("timestamps output: %d numbers committed, want %d (missing e.g. %v)", len(seen), want, missing)
	}
	return nil
}

// LongestGap is the longest time between consecutive stamps (ordered by time) whose
// stretch overlaps [from, to], with the stamps on each side of it.
func LongestGap(stamps []Stamp, from, to time.Time) (gap time.Duration, before, after Stamp) {
	for i := 1; i < len(stamps); i++ {
		a, b := stamps[i-1], stamps[i]
		if b.At.Before(from) || a.At.After(to) {
			continue
		}
		if d := b.At.Sub(a.At); d > gap {
			gap, before, after = d, a, b
		}
	}
	return gap, before, after
}
