package worker

import "hash/crc32"

// attemptSpace maps the attempt numbers of one AM into the TaskManager's own attempt ids.
//
// Every AM counts its attempts from 1, but a TaskManager can outlive an AM (it reconnects
// to the next one after a recovery, or to YARN's next attempt) and its data plane remembers
// the attempts it released. Without a mapping, the new AM's attempt 1 would find its
// channels "already released" from the old AM's attempt 1, or meet that attempt's leftover
// frames. The executor and the data plane therefore see AM attempt a of the AM with run id r
// as (hash(r) << 32) | a; reports to the AM carry a again.
type attemptSpace struct{ base int64 }

func newAttemptSpace(runID string) attemptSpace {
	if runID == "" {
		return attemptSpace{} // an AM without a run id: attempts are used as they are
	}
	h := int64(crc32.ChecksumIEEE([]byte(runID)) & 0x7fffffff)
	return attemptSpace{base: h << 32}
}

// local is the TaskManager's id of the AM's attempt a.
func (s attemptSpace) local(a int64) int64 { return s.base | (a & 0xffffffff) }

// am is the AM's number of the TaskManager's attempt id.
func (s attemptSpace) am(id int64) int64 { return id & 0xffffffff }
