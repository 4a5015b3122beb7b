package kafka

import (
	"fmt"
	"time"
)

// StartingOffsets says where a partition found at the job's first start is read from
// (partitions found later, and every partition in a restored job, start elsewhere: at their
// earliest offset, or at their checkpointed offset).
type StartingOffsets struct {
	kind     startKind
	at       time.Time
	fallback startKind
}

type startKind uint8

const (
	startEarliest startKind = iota
	startLatest
	startCommitted
	startTimestamp
)

// Earliest starts at each partition's first offset (the default).
func Earliest() StartingOffsets { return StartingOffsets{kind: startEarliest} }

// Latest starts at each partition's end (records produced before the start are skipped).
func Latest() StartingOffsets { return StartingOffsets{kind: startLatest} }

// Committed starts at the consumer group's committed offsets (Source.GroupID), and at
// fallback (Earliest or Latest) where the group has none.
func Committed(fallback StartingOffsets) StartingOffsets {
	return StartingOffsets{kind: startCommitted, fallback: fallback.kind}
}

// Timestamp starts at the first record whose timestamp is at or after t (at the end where
// there is none).
func Timestamp(t time.Time) StartingOffsets { return StartingOffsets{kind: startTimestamp, at: t} }

func (s StartingOffsets) String() string {
	switch s.kind {
	case startLatest:
		return "latest"
	case startCommitted:
		return fmt.Sprintf("committed (else %s)", StartingOffsets{kind: s.fallback})
	case startTimestamp:
		return "timestamp " + s.at.UTC().Format(time.RFC3339Nano)
	}
	return "earliest"
}
