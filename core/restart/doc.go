// Package restart holds the restart backoff strategies of the adaptive scheduler
// (Flink's RestartBackoffTimeStrategy): after a failure the scheduler calls
// NotifyFailure(now), then asks CanRestart and, if so, waits Backoff before the next
// attempt.
//
//	none               never restarts
//	fixed-delay        Attempts restarts, each after Delay
//	failure-rate       restarts while at most MaxFailuresPerInterval failures fall in the
//	                   last FailureRateInterval, each after Delay
//	exponential-delay  InitialBackoff, ×Multiplier per failure up to MaxBackoff, ±Jitter;
//	                   back to InitialBackoff after ResetThreshold without failure; at most
//	                   AttemptsBeforeReset restarts between resets
//
// Everything is pure: time is an argument and jitter comes from a seeded source.
package restart
