package source

import (
	"maps"
	"slices"
)

// NoCheckpoint is the restored checkpoint id when there is none (Flink's NO_CHECKPOINT).
const NoCheckpoint int64 = -1

// Split is an opaque unit of source work: a stable id and the connector's encoding.
type Split struct {
	ID   string `json:"id"`
	Data []byte `json:"data,omitempty"`
}

// Assignment is the splits handed to one reader, in assignment order.
type Assignment struct {
	Subtask int     `json:"subtask"`
	Splits  []Split `json:"splits"`
}

// Reader is one registered attempt of a source subtask.
type Reader struct {
	Subtask int   `json:"subtask"`
	Attempt int64 `json:"attempt"`
}

// Epoch is the assignments made between two coordinator checkpoints; Checkpoint is the
// checkpoint that sealed them.
type Epoch struct {
	Checkpoint  int64        `json:"checkpoint"`
	Assignments []Assignment `json:"assignments"`
}

func cloneSplits(ss []Split) []Split {
	out := make([]Split, len(ss))
	for i, s := range ss {
		out[i] = Split{ID: s.ID, Data: slices.Clone(s.Data)}
	}
	return out
}

// assignments turns subtask → splits into a slice sorted by subtask, without empty entries.
func assignments(m map[int][]Split) []Assignment {
	out := []Assignment{}
	for _, s := range slices.Sorted(maps.Keys(m)) {
		if len(m[s]) > 0 {
			out = append(out, Assignment{Subtask: s, Splits: cloneSplits(m[s])})
		}
	}
	return out
}
