package am

import (
	"strings"
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

// TestKeptNote: the job's end names the kept checkpoint and how to resume from it, or says
// that none was kept because none had completed (a retention that keeps checkpoints must
// not end the job silently).
func TestKeptNote(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"file:///ck/j/chk-7", []string{"latest checkpoint kept at file:///ck/j/chk-7", "RETAIN_ON_CANCELLATION", "--fromSavepoint file:///ck/j/chk-7"}},
		{"", []string{"no checkpoint had completed", "none is kept", "RETAIN_ON_CANCELLATION", "starts from the beginning"}},
	} {
		got := keptNote(RetainOnCancellation, tc.path)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("keptNote(%q) = %q, want it to contain %q", tc.path, got, w)
			}
		}
	}
}
