package am

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

func TestFlattenErrors(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	err := fmt.Errorf("update resource requirements: %w", errors.Join(a, errors.Join(b, c)))
	if got := flattenErrors(err); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("flattenErrors = %q", got)
	}
	if got := flattenErrors(fmt.Errorf("x: %w", a)); !reflect.DeepEqual(got, []string{"x: a"}) {
		t.Fatalf("flattenErrors of a plain wrap = %q", got)
	}
}

// TestJobShowsPendingRescale: GET /jobs/:jobid says why the job waits; with no
// TaskManager at all the lower bounds miss slots, and it counts them.
func TestJobShowsPendingRescale(t *testing.T) {
	for _, reactive := range []bool{false, true} {
		t.Run(fmt.Sprintf("reactive=%v", reactive), func(t *testing.T) {
			r := startRESTAM(t, restAMOptions{reactive: reactive})
			var d api.JobDetails
			waitUntil(t, "a pending rescale in GET /jobs/:jobid", func() bool {
				code, _, body := r.call(t, "GET", "/jobs/"+testJobID, "")
				if code != http.StatusOK {
					t.Fatalf("GET /jobs/%s = %d: %s", testJobID, code, body)
				}
				if err := json.Unmarshal(body, &d); err != nil {
					t.Fatalf("GET /jobs/%s: %v in %s", testJobID, err, body)
				}
				return d.PendingRescale != nil
			})
			p := d.PendingRescale
			if p.Reason != string(core.PendingSlots) || p.MissingSlots < 1 || !strings.Contains(p.Message, "more slot") {
				t.Fatalf("pending-rescale = %+v, want %s with the missing slots counted", p, core.PendingSlots)
			}
		})
	}
}
