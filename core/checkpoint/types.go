package checkpoint

import (
	"cmp"
	"fmt"
	"slices"
)

// Subtask names one parallel instance of a vertex (core.SubtaskID as plain values).
type Subtask struct {
	Vertex string `json:"vertex"`
	Index  int    `json:"index"`
}

func (s Subtask) String() string { return fmt.Sprintf("%s#%d", s.Vertex, s.Index) }

func compareSubtasks(a, b Subtask) int {
	if c := cmp.Compare(a.Vertex, b.Vertex); c != 0 {
		return c
	}
	return cmp.Compare(a.Index, b.Index)
}

// StateHandle is one file a subtask wrote into the checkpoint directory.
type StateHandle struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// SubtaskState is the state files of one subtask in one checkpoint.
type SubtaskState struct {
	Subtask Subtask       `json:"subtask"`
	Handles []StateHandle `json:"handles"`
}

// Size is the total size of the subtask's files.
func (s SubtaskState) Size() int64 {
	var n int64
	for _, h := range s.Handles {
		n += h.Size
	}
	return n
}

func sortSubtaskStates(ss []SubtaskState) {
	slices.SortFunc(ss, func(a, b SubtaskState) int { return compareSubtasks(a.Subtask, b.Subtask) })
}
