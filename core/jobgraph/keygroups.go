package jobgraph

import "fmt"

// KeyGroupFor maps a key's hash to its key group in [0, maxParallelism). The hash is first
// passed through a murmur3-style finalizer so that weak hashes (small integers, Go's
// string hashes of similar strings) still spread over all key groups.
func KeyGroupFor(keyHash uint64, maxParallelism int) int {
	if maxParallelism <= 0 {
		panic(fmt.Sprintf("jobgraph: KeyGroupFor: maxParallelism %d, want > 0", maxParallelism))
	}
	return int(fmix64(keyHash) % uint64(maxParallelism))
}

// fmix64 is murmur3's 64-bit finalizer: every input bit affects every output bit.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// OperatorIndexFor returns the subtask that owns keyGroup when the vertex runs at
// parallelism p: keyGroup*p/maxParallelism.
func OperatorIndexFor(keyGroup, maxParallelism, parallelism int) int {
	return keyGroup * parallelism / maxParallelism
}

// KeyGroupRange returns the inclusive range [start, end] of key groups that subtask index
// owns at the given parallelism; it is the exact inverse of OperatorIndexFor. It panics on
// arguments no valid job graph produces (index out of range, parallelism above max).
func KeyGroupRange(maxParallelism, parallelism, index int) (start, end int) {
	if parallelism <= 0 || maxParallelism < parallelism || index < 0 || index >= parallelism {
		panic(fmt.Sprintf("jobgraph: KeyGroupRange(maxParallelism=%d, parallelism=%d, index=%d): want 0 <= index < parallelism <= maxParallelism",
			maxParallelism, parallelism, index))
	}
	start = (index*maxParallelism + parallelism - 1) / parallelism
	end = ((index+1)*maxParallelism - 1) / parallelism
	return start, end
}
