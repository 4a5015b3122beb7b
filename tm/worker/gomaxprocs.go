package worker

import (
	"log/slog"
	"os"
	"runtime"
)

// ProcsFor is the GOMAXPROCS a TaskManager process with slots slots runs with, given the
// runtime's default (the CPUs it may use): two more Ps per slot, up to twice the default.
//
// A busy subtask never blocks while it has records (a source, and each chain that keeps up
// with one), so with only as many Ps as CPUs, a slot's one or two busy subtasks hold the Ps,
// and the goroutines that move data between them (a connection's reader and writer, a
// channel's input reader) run only when the Go scheduler preempts a subtask, up to 10 ms
// later, and network readiness is noticed at the same pace: credits and buffers then cross
// in lockstep with preemption and the subtasks wait on each other. Spare Ps park in the
// network poller and run those goroutines when their data is ready, and the OS time-slices
// the threads. Measured on 2 CPUs, WordCount at p=2 (two TaskManagers, one slot each) in
// make bench.
func ProcsFor(slots, procs int) int {
	return max(procs, min(procs+2*max(slots, 1), 2*procs))
}

// SetProcs sets GOMAXPROCS for a TaskManager with slots slots (ProcsFor), unless the
// GOMAXPROCS environment variable chose it.
func SetProcs(slots int, log *slog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	def := runtime.GOMAXPROCS(0)
	n := ProcsFor(slots, def)
	if n != def {
		runtime.GOMAXPROCS(n)
		log.Info("GOMAXPROCS set", "procs", n, "cpus", def, "slots", slots)
	}
}
