// Package am is tide's application master process: the composition root that wires the
// deterministic core to the world, and the one event-loop goroutine that owns it.
//
//	gRPC sessions ─┐                                  ┌─► TaskManagers (DeployTasks, ...)
//	timers (Clock) ┼─► inbox ─► loop ─► core.Step ─► effects ─► driver (release, deregister)
//	driver events  ┤            │                     └─► timers, REST snapshot, logs
//	checkpoint I/O ┘            ├─► checkpoint coordinator (trigger, acks, _metadata last)
//	                            └─► source coordinator (split enumerators, split requests)
//
// Everything that touches the core, the checkpoint coordinator or the source coordinator
// runs on the loop goroutine; network sends and storage I/O happen elsewhere and report
// back through the inbox.
package am
