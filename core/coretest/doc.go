// Package coretest drives tide's core scheduler in tests: an Env that plays the AM
// (it keeps the timers the scheduler armed and fires them as logical time advances, and
// remembers every deployed subtask so it can report task states), a tiny datadriven
// runner for scripted scenarios with golden output, and the command handlers of those
// scripts. Regenerate golden output with `go test ./core -rewrite` and review the diff.
package coretest
