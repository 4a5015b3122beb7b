//go:build !linux

package exec

// lowerUploadPriority is a no-op outside Linux (no per-thread nice value).
func lowerUploadPriority() error { return nil }
