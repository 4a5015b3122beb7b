package am

import "time"

// Clock is the AM's only source of time: the loop stamps every core event with Now and
// arms the core's timers with AfterFunc. Tests inject a fake.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Stopper
}

// Stopper cancels a timer armed by AfterFunc; it reports whether it stopped it.
type Stopper interface{ Stop() bool }

// SystemClock is the wall clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) AfterFunc(d time.Duration, f func()) Stopper { return time.AfterFunc(d, f) }
