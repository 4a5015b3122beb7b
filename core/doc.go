// Package core is tide's deterministic adaptive scheduler: events in, effects out.
//
// The AM's event loop calls Scheduler.Step(now, event) and carries out the effects it
// returns, in order. Time only arrives with Step; timers are StartTimer effects that come
// back as TimerFired events carrying the state version they were armed with, and any
// timer, task report or checkpoint answer of an older version or attempt is dropped and
// counted (Metrics.StaleEventsDropped). core/ never reads the clock, starts goroutines,
// or touches the network or files (deps_test.go enforces it), so every behaviour can be
// replayed from a script (testdata/, run by coretest) or a random simulation.
//
// States (one file each) and the job status they report:
//
//	Created (INITIALIZING)
//	   │ Start
//	   ▼
//	WaitingForResources (CREATED) ──desired, or sufficient & stable──► plan on free slots,
//	   ▲        │ timeout & insufficient / cancel / failure             reserve, deploy
//	   │        ▼                                                          │
//	   │     Finished (FINISHED | CANCELED | FAILED | SUSPENDED)           ▼
//	   │                                                           Executing (RUNNING)
//	   │   all old subtasks stopped + backoff                        │ failure (restart allowed),
//	   └──────────────── Restarting (RESTARTING) ◄───────────────────┘ rescale, evacuation
//	                        │ forced & target still free ──► Executing
//	Executing/Restarting ──cancel──► Canceling (CANCELLING) ──subtasks stopped──► Finished
//	Executing ──no restart──► Failing (FAILING) ──subtasks stopped──► Finished
//
// The legal edges are the table in state.go; transitionTo panics on anything else, on a
// same-state transition and on a transition started while another is under way.
//
// Rescale decisions in WaitingForResources and Executing go through a transition manager
// (transition_manager.go, Flink 2.0's phases Cooldown → Idling → Stabilizing → Stabilized
// → Transitioning) extended with Flink 1.19's min-parallelism-increase and
// scaling-interval.max, and with rescale-on-checkpoint. The slot allocator
// (core/allocator) decides parallelism and placement; the slot pool (core/slotpool) holds
// TaskManagers, slots, heartbeats and idle times; core/blocklist and core/restart are the
// blocked-node tracker and the restart backoff strategies.
//
// Reactive mode (Options.Reactive): every vertex's upper bound is its maxParallelism,
// resources are declared unbounded, the job waits forever for its first slots, and the
// submission stabilization is 0 unless configured (see ReactiveDefaults for why), so a
// lost TaskManager means an immediate restart onto what is left whenever the restart
// strategy allows.
package core
