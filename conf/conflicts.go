package conf

import (
	"fmt"
	"time"
)

// checkConflicts finds combinations of individually valid values that cannot work together.
// Options whose value failed to parse are absent from values and skipped.
func checkConflicts(set map[string]setting, values map[string]any) []error {
	var errs []error
	durationAtLeast := func(small, large *Option[time.Duration]) {
		s, okS := values[small.Key()].(time.Duration)
		l, okL := values[large.Key()].(time.Duration)
		if okS && okL && l < s {
			errs = append(errs, &ConflictError{
				Keys: []string{large.Key(), small.Key()},
				Msg: fmt.Sprintf("%s (%s, %s) must be at least %s (%s, %s)",
					large.Key(), FormatDuration(l), describe(set, large.Key()),
					small.Key(), FormatDuration(s), describe(set, small.Key())),
			})
		}
	}
	durationAtLeast(HeartbeatInterval, HeartbeatTimeout)
	durationAtLeast(ExponentialDelayInitialBackoff, ExponentialDelayMaxBackoff)

	token, tokenSet := set[RestAuthToken.Key()]
	file, fileSet := set[RestAuthTokenFile.Key()]
	if tokenSet && fileSet && token.value != "" && file.value != "" {
		errs = append(errs, &ConflictError{
			Keys: []string{RestAuthToken.Key(), RestAuthTokenFile.Key()},
			Msg: fmt.Sprintf("%s (%s) and %s (%s) are both set; set only one",
				RestAuthToken.Key(), token.source, RestAuthTokenFile.Key(), file.source),
		})
	}
	return errs
}

// describe names where key's value came from, for conflict messages.
func describe(set map[string]setting, key string) string {
	if s, ok := set[key]; ok {
		return "from " + s.source.String()
	}
	return "default"
}
