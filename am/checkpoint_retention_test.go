package am

import (
	"testing"

	"github.com/tidestream/tide/core"
)

func TestDiscardCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		retention string
		status    core.JobStatus
		want      bool
	}{
		{RetainDeleteOnCancellation, core.StatusFinished, true},
		{RetainDeleteOnCancellation, core.StatusCanceled, true},
		{RetainDeleteOnCancellation, core.StatusFailed, false},
		{RetainDeleteOnCancellation, core.StatusSuspended, false},
		{RetainOnCancellation, core.StatusFinished, true},
		{RetainOnCancellation, core.StatusCanceled, false},
		{RetainOnCancellation, core.StatusFailed, false},
		{RetainOnCancellation, core.StatusSuspended, false},
		{RetainNoExternalized, core.StatusFinished, true},
		{RetainNoExternalized, core.StatusCanceled, true},
		{RetainNoExternalized, core.StatusFailed, true},
		{RetainNoExternalized, core.StatusSuspended, false},
	} {
		if got := discardCheckpoints(tc.retention, tc.status); got != tc.want {
			t.Errorf("discardCheckpoints(%s, %s) = %v, want %v", tc.retention, tc.status, got, tc.want)
		}
	}
}
