package tidecli

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// jobSummary is one entry of GET /jobs/overview.
type jobSummary struct {
	JID              string `json:"jid"`
	Name             string `json:"name"`
	State            string `json:"state"`
	StartTime        int64  `json:"start-time"`
	EndTime          int64  `json:"end-time"`
	Duration         int64  `json:"duration"`
	LastModification int64  `json:"last-modification"`
}

func (c *restClient) jobsOverview(ctx context.Context) ([]jobSummary, error) {
	var body struct {
		Jobs []jobSummary `json:"jobs"`
	}
	if err := c.do(ctx, "GET", "/jobs/overview", nil, &body); err != nil {
		return nil, err
	}
	return body.Jobs, nil
}

// resolveJob finds the job JOB names: its id, a unique prefix of its id, or its name.
func (c *restClient) resolveJob(ctx context.Context, ref string) (jobSummary, error) {
	jobs, err := c.jobsOverview(ctx)
	if err != nil {
		return jobSummary{}, err
	}
	return matchJob(jobs, ref, c.addr)
}

func matchJob(jobs []jobSummary, ref, addr string) (jobSummary, error) {
	if ref == "" {
		return jobSummary{}, usagef("JOB is empty: expected a job id, a unique prefix of one, or the job name")
	}
	var byName, byPrefix []jobSummary
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
	for _, m := range [][]jobSummary{byName, byPrefix} {
		switch len(m) {
		case 0:
			continue
		case 1:
			return m[0], nil
		default:
			return jobSummary{}, fmt.Errorf("JOB %q matches %d jobs (%s): pass more of the job id", ref, len(m), describeJobs(m))
		}
	}
	if len(jobs) == 0 {
		return jobSummary{}, fmt.Errorf("JOB %q: the AM at %s runs no job", ref, addr)
	}
	return jobSummary{}, fmt.Errorf("JOB %q: no job with that id, id prefix or name at %s; it runs %s (see tide list)", ref, addr, describeJobs(jobs))
}

func describeJobs(jobs []jobSummary) string {
	parts := make([]string, 0, len(jobs))
	for _, j := range jobs {
		parts = append(parts, j.JID+" "+j.Name)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
