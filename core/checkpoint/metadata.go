package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// MetadataVersion is the version of the _metadata format this package writes and reads.
const MetadataVersion = 1

// ErrBadMetadata is wrapped by every error decoding or validating _metadata.
var ErrBadMetadata = errors.New("invalid checkpoint _metadata")

// VertexMeta is the parallelism a vertex ran at when the checkpoint was taken; with
// MaxParallelism (the number of key groups) it lets a new parallelism find its ranges.
type VertexMeta struct {
	ID             string `json:"id"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"maxParallelism"`
}

// Metadata is the content of <job-id>/chk-<n>/_metadata, written last: it lists every
// file of the checkpoint. Timestamps are unix milliseconds.
type Metadata struct {
	Version             int            `json:"version"`
	JobID               string         `json:"jobId"`
	CheckpointID        int64          `json:"checkpointId"`
	Attempt             int64          `json:"attempt"`
	TriggerTimestamp    int64          `json:"triggerTimestamp"`
	CompletionTimestamp int64          `json:"completionTimestamp"`
	Vertices            []VertexMeta   `json:"vertices"`
	Subtasks            []SubtaskState `json:"subtasks"`
	// MasterStates are files the AM itself wrote, such as source coordinator state.
	MasterStates []StateHandle `json:"masterStates"`
	// CheckpointType and FormatType mark a savepoint's _metadata (SAVEPOINT and its
	// SavepointFormatType); a checkpoint's leaves them out.
	CheckpointType Type       `json:"checkpointType,omitempty"`
	FormatType     FormatType `json:"formatType,omitempty"`
}

// NewMetadata builds the _metadata of a completed checkpoint. Each vertex's parallelism
// is the number of its acknowledging subtasks; maxParallelism gives its key groups.
func NewMetadata(jobID string, done Completed, maxParallelism map[string]int, master []StateHandle) Metadata {
	m := Metadata{
		Version: MetadataVersion, JobID: jobID, CheckpointID: done.ID, Attempt: done.Attempt,
		TriggerTimestamp:    done.Trigger.UnixMilli(),
		CompletionTimestamp: done.Trigger.Add(done.Duration).UnixMilli(),
		Subtasks:            done.Handles,
		MasterStates:        master,
	}
	if done.Options.IsSavepoint() {
		m.CheckpointType, m.FormatType = TypeSavepoint, done.Options.Format
	}
	if m.MasterStates == nil {
		m.MasterStates = []StateHandle{}
	}
	counts := map[string]int{}
	var order []string
	for _, s := range done.Handles {
		if counts[s.Subtask.Vertex] == 0 {
			order = append(order, s.Subtask.Vertex)
		}
		counts[s.Subtask.Vertex]++
	}
	for _, v := range order {
		m.Vertices = append(m.Vertices, VertexMeta{ID: v, Parallelism: counts[v], MaxParallelism: maxParallelism[v]})
	}
	return m
}

// Size is the total size of every file the checkpoint lists.
func (m Metadata) Size() int64 {
	var n int64
	for _, s := range m.Subtasks {
		n += s.Size()
	}
	for _, h := range m.MasterStates {
		n += h.Size
	}
	return n
}

// Completion is the completion time.
func (m Metadata) Completion() time.Time { return time.UnixMilli(m.CompletionTimestamp) }

// EncodeMetadata validates m and encodes it as indented JSON.
func EncodeMetadata(m Metadata) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode _metadata of checkpoint %d: %w", m.CheckpointID, err)
	}
	return append(b, '\n'), nil
}

// DecodeMetadata parses and validates a _metadata file. Unknown fields, trailing data,
// an unsupported version and inconsistent content are errors wrapping ErrBadMetadata.
func DecodeMetadata(data []byte) (Metadata, error) {
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&probe); err != nil {
		return Metadata{}, fmt.Errorf("%w: not a JSON object: %v", ErrBadMetadata, err)
	}
	if probe.Version == nil {
		return Metadata{}, fmt.Errorf("%w: field \"version\" missing", ErrBadMetadata)
	}
	if *probe.Version != MetadataVersion {
		return Metadata{}, fmt.Errorf("%w: version %d: this build reads version %d", ErrBadMetadata, *probe.Version, MetadataVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Metadata
	if err := dec.Decode(&m); err != nil {
		return Metadata{}, fmt.Errorf("%w: %v", ErrBadMetadata, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Metadata{}, fmt.Errorf("%w: trailing data after the JSON object", ErrBadMetadata)
	}
	if err := m.Validate(); err != nil {
		return Metadata{}, err
	}
	return m, nil
}

// Validate checks that m is consistent and reports every problem.
func (m Metadata) Validate() error {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if m.Version != MetadataVersion {
		add("version %d: expected %d", m.Version, MetadataVersion)
	}
	if strings.TrimSpace(m.JobID) == "" {
		add("jobId is empty")
	}
	if m.CheckpointID < 1 {
		add("checkpointId %d: expected ≥ 1", m.CheckpointID)
	}
	if m.Attempt < 0 {
		add("attempt %d: expected ≥ 0", m.Attempt)
	}
	if m.CompletionTimestamp < m.TriggerTimestamp {
		add("completionTimestamp %d is before triggerTimestamp %d", m.CompletionTimestamp, m.TriggerTimestamp)
	}
	switch m.CheckpointType {
	case "", TypeCheckpoint, TypeSavepoint:
	default:
		add("checkpointType %q: expected %s or %s", m.CheckpointType, TypeCheckpoint, TypeSavepoint)
	}
	switch m.FormatType {
	case "", FormatCanonical, FormatNative:
	default:
		add("formatType %q: expected %s or %s", m.FormatType, FormatCanonical, FormatNative)
	}
	vertices := map[string]VertexMeta{}
	for _, v := range m.Vertices {
		switch {
		case v.ID == "":
			add("vertex with empty id")
		case vertices[v.ID].ID != "":
			add("vertex %q listed twice", v.ID)
		case v.Parallelism < 1:
			add("vertex %q parallelism %d: expected ≥ 1", v.ID, v.Parallelism)
		case v.MaxParallelism != 0 && v.MaxParallelism < v.Parallelism:
			add("vertex %q maxParallelism %d is below its parallelism %d", v.ID, v.MaxParallelism, v.Parallelism)
		}
		vertices[v.ID] = v
	}
	seen := map[Subtask]bool{}
	files := map[string]string{}
	checkHandle := func(owner string, h StateHandle) {
		if err := validFileName(h.Name); err != nil {
			add("%s: %v", owner, err)
		} else if prev, dup := files[h.Name]; dup {
			add("%s: file %q also listed by %s", owner, h.Name, prev)
		} else {
			files[h.Name] = owner
		}
		if h.Size < 0 {
			add("%s: file %q size %d: expected ≥ 0", owner, h.Name, h.Size)
		}
	}
	perVertex := map[string]int{}
	for _, s := range m.Subtasks {
		st := s.Subtask
		v, ok := vertices[st.Vertex]
		switch {
		case !ok:
			add("subtask %s: vertex %q not listed in vertices", st, st.Vertex)
		case st.Index < 0 || st.Index >= v.Parallelism:
			add("subtask %s: index outside [0, %d)", st, v.Parallelism)
		}
		if seen[st] {
			add("subtask %s listed twice", st)
		}
		seen[st] = true
		perVertex[st.Vertex]++
		for _, h := range s.Handles {
			checkHandle("subtask "+st.String(), h)
		}
	}
	for _, v := range m.Vertices {
		if v.ID != "" && v.Parallelism >= 1 && perVertex[v.ID] != v.Parallelism {
			add("vertex %q parallelism %d but %d subtasks listed", v.ID, v.Parallelism, perVertex[v.ID])
		}
	}
	for _, h := range m.MasterStates {
		checkHandle("master state", h)
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w of job %q checkpoint %d: %s", ErrBadMetadata, m.JobID, m.CheckpointID, strings.Join(probs, "; "))
	}
	return nil
}

// validFileName accepts a slash-separated relative path without empty, "." or ".."
// elements, other than the reserved _metadata.
func validFileName(name string) error {
	if name == "" {
		return errors.New("empty file name")
	}
	if name == MetadataFile {
		return fmt.Errorf("file name %q is reserved", name)
	}
	if strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
		return fmt.Errorf("file name %q: expected a relative slash-separated path", name)
	}
	for el := range strings.SplitSeq(name, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("file name %q: empty, \".\" or \"..\" element", name)
		}
	}
	return nil
}
