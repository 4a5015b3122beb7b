package tidecli

import (
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show a job's status, attempt and per-vertex parallelism",
		ArgsUsage: "JOB",
		Description: `JOB is the job id, a unique prefix of it, or the job name. Shows GET /jobs/:jobid and
each vertex's resource requirements (lowerBound..upperBound).`,
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: jobAction(nil, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
			d, err := cc.api.Job(c.Context, j.JID)
			if err != nil {
				return err
			}
			reqs, err := cc.api.ResourceRequirements(c.Context, j.JID)
			if api.IsStatus(err, http.StatusNotFound, http.StatusMethodNotAllowed) {
				reqs, err = nil, nil // an AM without the endpoint: show what there is
			}
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]any{"job": d, "resource-requirements": reqs})
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
