package testkit

import (
	"fmt"

	"github.com/tidestream/tide/api"
)

// JobDetails is GET /jobs/:id, in the public API's type.
type JobDetails = api.JobDetails

// RunningAt is nil when the job is RUNNING with every vertex at parallelism p, else why
// it is not.
func RunningAt(d JobDetails, p int) error {
	if d.State != "RUNNING" || len(d.Vertices) == 0 {
		return fmt.Errorf("job %s: state %s with %d vertices, want RUNNING", d.JID, d.State, len(d.Vertices))
	}
	for _, v := range d.Vertices {
		if v.Parallelism != p {
			return fmt.Errorf("job %s: vertex %s at parallelism %d, want %d", d.JID, v.ID, v.Parallelism, p)
		}
	}
	return nil
}

// WaitRunningAt waits until job id is RUNNING with every vertex at parallelism p.
func WaitRunningAt(t Fataler, get Getter, id string, p int) JobDetails {
	t.Helper()
	var d JobDetails
	WaitFor(t, fmt.Sprintf("job %s RUNNING at parallelism %d", id, p), func() (bool, error) {
		d = JobDetails{}
		if err := get("/jobs/"+id, &d); err != nil {
			return false, err
		}
		err := RunningAt(d, p)
		return err == nil, err
	})
	return d
}

// JobIDs lists the jobs of GET /jobs/overview.
func JobIDs(get Getter) ([]string, error) {
	var ov struct {
		Jobs []struct {
			JID string `json:"jid"`
		} `json:"jobs"`
	}
	if err := get("/jobs/overview", &ov); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(ov.Jobs))
	for _, j := range ov.Jobs {
		ids = append(ids, j.JID)
	}
	return ids, nil
}

// WaitJobID waits until the REST API serves and lists exactly one job, and returns its id.
func WaitJobID(t Fataler, get Getter) string {
	t.Helper()
	var id string
	WaitFor(t, "the AM's REST API listing one job", func() (bool, error) {
		ids, err := JobIDs(get)
		if err != nil {
			return false, err
		}
		if len(ids) != 1 {
			return false, fmt.Errorf("jobs %v, want one", ids)
		}
		id = ids[0]
		return true, nil
	})
	return id
}
