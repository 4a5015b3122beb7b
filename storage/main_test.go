package storage_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind (e.g. an HDFS client's lease
// renewer after Close).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
