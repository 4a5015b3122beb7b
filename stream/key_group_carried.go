package stream

import (
	"os"
	"sync/atomic"
)

// A record on a HASH edge carries the key group its sender routed it by (the runtime's
// record header). The keyed operators built here (Reduce, Aggregate, KeyedProcess,
// TumblingWindow) sit at the head of the vertex such an edge feeds and key their records
// with the very selector the edge hashes (addKeyed builds both from one KeyedStream), and
// the sender computes the group with the consumer's maxParallelism: so they take the
// carried group instead of hashing the key again. A carried group the subtask does not own
// (or none) falls back to hashing.

// VerifyCarriedKeyGroupsEnv, set to 1 in a process's environment, turns
// VerifyCarriedKeyGroups on from the start (for TaskManagers a test starts).
const VerifyCarriedKeyGroupsEnv = "TIDE_VERIFY_KEY_GROUPS"

var verifyCarried atomic.Bool

func init() { verifyCarried.Store(os.Getenv(VerifyCarriedKeyGroupsEnv) == "1") }

// VerifyCarriedKeyGroups turns a check on (or off) for debugging and tests: every keyed
// operator hashes each record's key again and fails when the key group the record came
// with differs. It costs what carrying the key group saves.
func VerifyCarriedKeyGroups(on bool) { verifyCarried.Store(on) }

// keyedProcessor is a keyed operator that takes a record with the key group its sender
// computed (kg < 0: none).
type keyedProcessor[T any] interface {
	typedProcessor[T]
	// processKeyedRange handles records recs in order, record i with timestamp ts[i]
	// and carried key group kgs[i], emitting into out.
	processKeyedRange(recs []T, ts []int64, kgs []int32, out Collector) error
}

// keyedCollector is the head of a chain whose keyed operator takes carried key groups.
type keyedCollector[T any] interface {
	typedCollector[T]
	// collectKeyedRange takes a run of records with their timestamps and carried key
	// groups: one call per run, not per record.
	collectKeyedRange(recs []T, ts []int64, kgs []int32) error
}

// keyedLink is typedLink for a keyed operator: it also hands on carried key groups.
type keyedLink[T any] struct {
	typedLink[T]
	kop keyedProcessor[T]
}

func (l *keyedLink[T]) collectKeyedRange(recs []T, ts []int64, kgs []int32) error {
	return l.kop.processKeyedRange(recs, ts, kgs, l.next)
}

func linkKeyed[T any](op keyedProcessor[T], next Collector) Collector {
	return &keyedLink[T]{typedLink: typedLink[T]{op: op, next: next}, kop: op}
}
