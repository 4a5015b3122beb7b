//go:build !linux

package exec

// lowerUploadPriority is a no-op outside Linux (no per-thread nice value).
func lowerUploadPriority(int) (int, error) { return 0, nil }
