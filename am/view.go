package am

import (
	"sort"
	"sync"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/checkpoint"
)

// view is what the REST API shows: the loop writes it, handlers read copies.
type view struct {
	mu sync.Mutex

	jobID, jobName string
	start          time.Time
	end            time.Time
	status         core.JobStatus
	timestamps     map[core.JobStatus]time.Time
	attempt        core.AttemptID
	restoreFrom    core.CheckpointID
	deployedAt     time.Time
	vertices       []core.VertexDeployment
	usedSlots      map[core.TaskManagerID]int
	taskManagers   map[core.TaskManagerID]tmView
	rescales       []core.Rescale
	blocked        []blocklist.BlockedNode
	checkpoints    checkpoint.Stats
	failover       *failoverOutcome
}

type tmView struct {
	ID          core.TaskManagerID
	Node        core.NodeID
	Slots       int
	DataAddress string
	Joined      time.Time
}

func newView(jobID, jobName string, now time.Time) *view {
	return &view{
		jobID: jobID, jobName: jobName, start: now, status: core.StatusInitializing,
		timestamps:   map[core.JobStatus]time.Time{core.StatusInitializing: now},
		taskManagers: map[core.TaskManagerID]tmView{},
		usedSlots:    map[core.TaskManagerID]int{},
	}
}

func (v *view) statusChanged(s core.JobStatus, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.status = s
	v.timestamps[s] = now
	if s.IsTerminal() {
		v.end = now
	}
}

func (v *view) taskManagerJoined(s *session, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.taskManagers[s.id] = tmView{ID: s.id, Node: s.node, Slots: s.slots, DataAddress: s.dataAdr, Joined: now}
}

func (v *view) taskManagerLeft(id core.TaskManagerID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.taskManagers, id)
	delete(v.usedSlots, id)
}

func (v *view) deployed(e core.Deploy, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.attempt, v.restoreFrom, v.deployedAt = e.Attempt, e.RestoreFrom, now
	v.vertices = append([]core.VertexDeployment(nil), e.Vertices...)
	v.usedSlots = map[core.TaskManagerID]int{}
	for _, sa := range e.Slots {
		v.usedSlots[sa.Slot.TaskManager]++
	}
}

func (v *view) addRescale(r core.Rescale) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rescales = append(v.rescales, r)
}

func (v *view) setBlocked(b []blocklist.BlockedNode) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.blocked = append([]blocklist.BlockedNode(nil), b...)
}

func (v *view) setCheckpoints(s checkpoint.Stats) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.checkpoints = s
}

// snapshot is a consistent copy of the view.
type snapshot struct {
	JobID, JobName string
	Start, End     time.Time
	Status         core.JobStatus
	Timestamps     map[core.JobStatus]time.Time
	Attempt        core.AttemptID
	RestoreFrom    core.CheckpointID
	DeployedAt     time.Time
	Vertices       []core.VertexDeployment
	TaskManagers   []tmView
	UsedSlots      map[core.TaskManagerID]int
	Rescales       []core.Rescale
	Blocked        []blocklist.BlockedNode
	Checkpoints    checkpoint.Stats
	Failover       *failoverOutcome // nil: this AM took over no running job
}

func (v *view) snapshot() snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := snapshot{
		JobID: v.jobID, JobName: v.jobName, Start: v.start, End: v.end, Status: v.status,
		Timestamps: map[core.JobStatus]time.Time{}, Attempt: v.attempt, RestoreFrom: v.restoreFrom,
		DeployedAt: v.deployedAt, Vertices: append([]core.VertexDeployment(nil), v.vertices...),
		UsedSlots: map[core.TaskManagerID]int{}, Rescales: append([]core.Rescale(nil), v.rescales...),
		Blocked: append([]blocklist.BlockedNode(nil), v.blocked...), Checkpoints: v.checkpoints,
	}
	if v.failover != nil {
		f := *v.failover
		s.Failover = &f
	}
	for k, t := range v.timestamps {
		s.Timestamps[k] = t
	}
	for k, n := range v.usedSlots {
		s.UsedSlots[k] = n
	}
	for _, tm := range v.taskManagers {
		s.TaskManagers = append(s.TaskManagers, tm)
	}
	sort.Slice(s.TaskManagers, func(i, j int) bool { return s.TaskManagers[i].ID < s.TaskManagers[j].ID })
	return s
}

// setFailover publishes what this AM made of the recovered deployment.
func (v *view) setFailover(o failoverOutcome) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.failover = &o
}
