package storage_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind (e.g. an HDFS client's lease
// renewer after Close). One exception: colinmarc/hdfs v2.4.0 never ends the ack reader of a
// block pipeline that broke (blockWriteStream.finish returns before closing its packet
// channel), so each upload attempt that a datanode failure ended strands one goroutine in
// ackPackets; TestHDFSWriteAcrossDatanodeRestart and the block upload tests that break a
// pipeline (or abandon a failed upload session, which cuts its connections) cause some on purpose.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/colinmarc/hdfs/v2/internal/transfer.(*blockWriteStream).ackPackets"))
}
