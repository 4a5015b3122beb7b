package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
)

// benchScheduler returns a running job of 10 vertices (one slot-sharing group each) on
// tms TaskManagers × 10 slots: tms×10 subtasks, one per slot.
func benchScheduler(b *testing.B, tms int) *Scheduler {
	b.Helper()
	g := jobgraph.JobGraph{Name: "bench", Type: jobgraph.Streaming}
	for i := 0; i < 10; i++ {
		p := tms
		g.Vertices = append(g.Vertices, jobgraph.Vertex{ID: fmt.Sprintf("v%d", i), Parallelism: p, MaxParallelism: jobgraph.UpperBoundMaxParallelism,
			SlotSharingGroup: fmt.Sprintf("g%d", i)})
	}
	o := testOptions()
	o.HeartbeatTimeout = 50 * time.Second
	o.SlotIdleTimeout = 50 * time.Second
	s, err := New(Config{Graph: g, Options: o, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < tms; i++ {
		s.Step(t0, TaskManagerRegistered{TaskManager: TaskManagerID(fmt.Sprintf("tm%04d", i)), Node: NodeID(fmt.Sprintf("n%04d", i)), Slots: 10})
	}
	s.Step(t0, Start{})
	if s.StateName() != StateExecuting || len(s.dep.tasks) != tms*10 {
		b.Fatalf("setup: %s with %d subtasks", s.StateName(), len(s.dep.tasks))
	}
	return s
}

// benchPlanAndDeploy measures one full scheduling decision: plan on the free slots,
// reserve them, and build the Deploy effect (then release, untimed work included).
func benchPlanAndDeploy(b *testing.B, tms int) {
	s := benchScheduler(b, tms)
	s.releaseDeployment(t0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		plan, ok := s.planDeployment()
		if !ok {
			b.Fatal("insufficient")
		}
		if err := s.deploy(plan); err != nil {
			b.Fatal(err)
		}
		s.out = s.out[:0]
		s.releaseDeployment(t0)
	}
}

// BenchmarkPlanAndDeploy10k: 10,000 subtasks on 1,000 TaskManagers × 10 slots.
func BenchmarkPlanAndDeploy10k(b *testing.B) { benchPlanAndDeploy(b, 1000) }

// BenchmarkPlanAndDeploy20k: twice as many subtasks and TaskManagers.
func BenchmarkPlanAndDeploy20k(b *testing.B) { benchPlanAndDeploy(b, 2000) }

// BenchmarkStep measures ordinary events on a running 10k-subtask job: heartbeats, task
// reports and completed checkpoints.
func BenchmarkStep(b *testing.B) {
	s := benchScheduler(b, 1000)
	attempt := s.dep.attempt
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	now := t0
	for b.Loop() {
		now = now.Add(time.Millisecond)
		switch i % 3 {
		case 0:
			s.Step(now, TaskManagerHeartbeat{TaskManager: TaskManagerID(fmt.Sprintf("tm%04d", i%1000))})
		case 1:
			s.Step(now, TaskStateChanged{Attempt: attempt, Subtask: SubtaskID{Vertex: "v3", Index: i % 1000}, State: TaskRunning})
		default:
			s.Step(now, CheckpointCompleted{Attempt: attempt, Checkpoint: CheckpointID(i)})
		}
		i++
	}
	if s.StateName() != StateExecuting {
		b.Fatalf("benchmark left the job in %s", s.StateName())
	}
}
