package conf

import "strings"

// suggest returns the declared key closest to an unknown one, or "" when none is close enough.
// Case differences cost nothing (taskmanager.numberoftaskslots → taskmanager.numberOfTaskSlots);
// otherwise the edit distance must be at most max(2, len/5).
func suggest(unknown string) string {
	lower := strings.ToLower(unknown)
	limit := max(2, len(unknown)/5)
	best, bestDist := "", limit+1
	for _, name := range knownNames() {
		d := editDistance(lower, strings.ToLower(name), bestDist)
		if d < bestDist {
			best, bestDist = name, d
		}
	}
	if best == "" {
		return ""
	}
	spec, _ := Lookup(best)
	return spec.Key
}

// editDistance is the Levenshtein distance between a and b (bytes), or a value ≥ limit once it is
// certain to reach limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
