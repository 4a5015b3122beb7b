package core

import "fmt"

// TaskManagerID names one registered TaskManager process (a worker). Drivers use the same
// id for the worker they started, so a driver's "worker terminated" maps to the TaskManager.
type TaskManagerID string

// NodeID names the machine a TaskManager runs on: the host name on YARN and standalone,
// spec.nodeName on Kubernetes, or taskmanager.node-id when set. The blocklist acts on nodes.
type NodeID string

// VertexID names one job vertex (an operator chain) in the job graph.
type VertexID string

// SlotID names one slot of one TaskManager.
type SlotID struct {
	TaskManager TaskManagerID
	Index       int
}

func (s SlotID) String() string { return fmt.Sprintf("%s/%d", s.TaskManager, s.Index) }

// AttemptID numbers the deployments of the job: every time the scheduler deploys the job
// (first start, restart, rescale) the attempt grows by one. Task state reports and
// checkpoint acknowledgements carry it, so answers from an older deployment are dropped.
type AttemptID int64

// SubtaskID names one parallel instance of a vertex within an attempt.
type SubtaskID struct {
	Vertex VertexID
	Index  int
}

func (s SubtaskID) String() string { return fmt.Sprintf("%s#%d", s.Vertex, s.Index) }

// CheckpointID numbers checkpoints of the job; it never goes backwards, across attempts
// and AM restarts.
type CheckpointID int64
