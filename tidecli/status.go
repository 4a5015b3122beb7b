package tidecli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"
)

// jobDetail is GET /jobs/:jobid (the fields the CLI shows).
type jobDetail struct {
	JID        string           `json:"jid"`
	Name       string           `json:"name"`
	State      string           `json:"state"`
	StartTime  int64            `json:"start-time"`
	Duration   int64            `json:"duration"`
	Attempt    int64            `json:"attempt"`
	Timestamps map[string]int64 `json:"timestamps"`
	Vertices   []vertexDetail   `json:"vertices"`
}

type vertexDetail struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"maxParallelism"`
	Status         string `json:"status"`
}

func (c *restClient) job(ctx context.Context, id string) (jobDetail, json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.do(ctx, "GET", "/jobs/"+id, nil, &raw); err != nil {
		return jobDetail{}, nil, err
	}
	var d jobDetail
	if err := json.Unmarshal(raw, &d); err != nil {
		return jobDetail{}, nil, fmt.Errorf("GET /jobs/%s: unexpected answer: %w", id, err)
	}
	return d, raw, nil
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show a job's status, attempt and per-vertex parallelism",
		ArgsUsage: "JOB",
		Description: `JOB is the job id, a unique prefix of it, or the job name. Shows GET /jobs/:jobid and
each vertex's resource requirements (lowerBound..upperBound).`,
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: jobAction(nil, func(c *cli.Context, cc *clientCommand, j jobSummary) error {
			d, raw, err := cc.api.job(c.Context, j.JID)
			if err != nil {
				return err
			}
			reqs, err := cc.api.requirements(c.Context, j.JID)
			var ae *apiError
			if errors.As(err, &ae) && (ae.status == http.StatusNotFound || ae.status == http.StatusMethodNotAllowed) {
				reqs, err = nil, nil // an AM without the endpoint: show what there is
			}
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]any{"job": raw, "resource-requirements": reqs})
			}
			fmt.Fprintf(cc.out, "Job:       %s (%s)\n", d.JID, d.Name)
			since := ""
			if ts, ok := d.Timestamps[d.State]; ok && ts > 0 {
				since = " since " + fmtMillis(ts)
			}
			fmt.Fprintf(cc.out, "Status:    %s%s\n", d.State, since)
			fmt.Fprintf(cc.out, "Attempt:   %d\n", d.Attempt)
			fmt.Fprintf(cc.out, "Started:   %s (%s ago)\n\n", fmtMillis(d.StartTime), fmtDurationMillis(d.Duration))
			t := newTable(cc.out, "VERTEX", "PARALLELISM", "REQUIRED", "MAX PARALLELISM", "STATUS")
			for _, v := range d.Vertices {
				required := "-"
				if b, ok := reqs[v.ID]; ok {
					required = b.Parallelism.String()
				}
				name := v.Name
				if name != v.ID && name != "" {
					name = v.ID + " (" + v.Name + ")"
				} else {
					name = v.ID
				}
				status := v.Status
				if status == "" {
					status = "-"
				}
				t.row(name, itoa(v.Parallelism), required, itoa(v.MaxParallelism), status)
			}
			return t.flush()
		}),
	}
}
