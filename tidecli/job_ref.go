package tidecli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tidestream/tide/api"
)

// resolveJob finds the job JOB names: its id, a unique prefix of its id, or its name.
func resolveJob(ctx context.Context, c *api.Client, ref string) (api.JobOverview, error) {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return api.JobOverview{}, err
	}
	return matchJob(jobs, ref, c.Address())
}

func matchJob(jobs []api.JobOverview, ref, addr string) (api.JobOverview, error) {
	if ref == "" {
		return api.JobOverview{}, usagef("JOB is empty: expected a job id, a unique prefix of one, or the job name")
	}
	var byName, byPrefix []api.JobOverview
	for _, j := range jobs {
		switch {
		case strings.EqualFold(j.JID, ref):
			return j, nil
		case j.Name == ref:
			byName = append(byName, j)
		case strings.HasPrefix(strings.ToLower(j.JID), strings.ToLower(ref)):
			byPrefix = append(byPrefix, j)
		}
	}
	for _, m := range [][]api.JobOverview{byName, byPrefix} {
		switch len(m) {
		case 0:
			continue
		case 1:
			return m[0], nil
		default:
			return api.JobOverview{}, fmt.Errorf("JOB %q matches %d jobs (%s): pass more of the job id", ref, len(m), describeJobs(m))
		}
	}
	if len(jobs) == 0 {
		return api.JobOverview{}, fmt.Errorf("JOB %q: the AM at %s runs no job", ref, addr)
	}
	return api.JobOverview{}, fmt.Errorf("JOB %q: no job with that id, id prefix or name at %s; it runs %s (see tide list)", ref, addr, describeJobs(jobs))
}

func describeJobs(jobs []api.JobOverview) string {
	parts := make([]string, 0, len(jobs))
	for _, j := range jobs {
		parts = append(parts, j.JID+" "+j.Name)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
