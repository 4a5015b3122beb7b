//go:build race

package state

// raceEnabled: the race detector's shadow memory makes RSS no measure of a TaskManager's.
const raceEnabled = true
