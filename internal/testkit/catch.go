package testkit

import (
	"fmt"
	"runtime"
	"testing"
)

// Ending is how a test helper ended the test it was handed: the message of its Fatal or
// Fatalf (Failed) or of its Skip or Skipf (Skipped); both empty when the helper returned.
type Ending struct{ Failed, Skipped string }

// Catch calls f with a testing.TB that records Fatal, Fatalf, Skip and Skipf instead of acting
// on them, and returns what f ended with; as with a testing.T, nothing after such a call runs.
// It tests helpers that skip or fail tests (a harness's Require).
func Catch(t testing.TB, f func(tb testing.TB)) (e Ending) {
	t.Helper()
	c := &catcher{TB: t}
	done := make(chan struct{})
	// Run f on its own goroutine, ended by runtime.Goexit like testing.T ends a test.
	go func() {
		defer close(done)
		f(c)
	}()
	<-done
	return c.ending
}

type catcher struct {
	testing.TB
	ending Ending
}

func (c *catcher) Helper() {}

func (c *catcher) Fatal(args ...any) { c.ending.Failed = fmt.Sprint(args...); runtime.Goexit() }

func (c *catcher) Fatalf(format string, args ...any) {
	c.ending.Failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (c *catcher) Skip(args ...any) { c.ending.Skipped = fmt.Sprint(args...); runtime.Goexit() }

func (c *catcher) Skipf(format string, args ...any) {
	c.ending.Skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
