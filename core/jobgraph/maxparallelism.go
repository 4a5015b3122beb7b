package jobgraph

const (
	// MinDefaultMaxParallelism is the smallest maxParallelism the default rule picks.
	MinDefaultMaxParallelism = 1 << 7
	// UpperBoundMaxParallelism is the hard cap on maxParallelism (number of key groups).
	UpperBoundMaxParallelism = 1 << 15
)

// DefaultMaxParallelism is the maxParallelism of a vertex whose user set none:
// min(max(roundUpPow2(p + p/2), 128), 32768).
func DefaultMaxParallelism(parallelism int) int {
	p := parallelism + parallelism/2
	if p > UpperBoundMaxParallelism {
		return UpperBoundMaxParallelism
	}
	return min(max(roundUpPow2(p), MinDefaultMaxParallelism), UpperBoundMaxParallelism)
}

// roundUpPow2 returns the smallest power of two ≥ n (1 for n ≤ 1).
func roundUpPow2(n int) int {
	r := 1
	for r < n {
		r <<= 1
	}
	return r
}
