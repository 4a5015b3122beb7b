package core

// Metrics are the scheduler's counters and gauges (the AM exports them).
type Metrics struct {
	NumRestarts              int // restarts after failures and rescales (Flink's numRestarts)
	NumRescales              int // completed rescales that changed the parallelism
	StaleEventsDropped       int // timers, task reports and answers of an older state or attempt
	NumBlockedNodes          int
	RegisteredTaskManagers   int
	TotalSlots               int // usable slots (not on blocked nodes)
	FreeSlots                int
	RejectedRegistrations    int // TaskManagers refused (blocked node)
	ReservationFailures      int // plans whose slots vanished before reservation
	PendingWorkers           int // workers requested from an active driver, not yet registered
	HeartbeatTimeouts        int
	ReleasedIdleTaskManagers int
}
