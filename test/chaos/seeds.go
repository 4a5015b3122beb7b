package chaos

import (
	"fmt"
	"strconv"
	"strings"
)

// SeedsEnv names the seeds a chaos run uses: a comma- or space-separated list of unsigned
// integers (`make chaos SEED=42` sets it).
const SeedsEnv = "TIDE_CHAOS_SEEDS"

// ParseSeeds reads a seed list such as "1,2 3"; duplicates are an error (they would only
// repeat a run), and so is an empty list.
func ParseSeeds(s string) ([]uint64, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s=%q: no seeds; expected integers such as 1,2,3", SeedsEnv, s)
	}
	seen := map[uint64]bool{}
	out := make([]uint64, 0, len(fields))
	for _, f := range fields {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: seed %q is not an unsigned integer", SeedsEnv, s, f)
		}
		if seen[v] {
			return nil, fmt.Errorf("%s=%q: seed %d given twice", SeedsEnv, s, v)
		}
		seen[v] = true
		out = append(out, v)
	}
	return out, nil
}
