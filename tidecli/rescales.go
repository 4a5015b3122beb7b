package tidecli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func rescalesCommand() *cli.Command {
	return &cli.Command{
		Name:      "rescales",
		Usage:     "show a job's rescale history",
		ArgsUsage: "JOB",
		Description: `Lists every rescale of the job, oldest first (GET /jobs/:jobid/rescales): what triggered
it, its outcome, when it started, how long it took and each vertex's parallelism before
and after.`,
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: jobAction(nil, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
			rescales, err := cc.api.Rescales(c.Context, j.JID)
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(rescales)
			}
			if len(rescales.Rescales) == 0 {
				cc.progress("Job %s has not been scheduled yet.", j.JID)
				return nil
			}
			t := newTable(cc.out, "ID", "TRIGGER", "OUTCOME", "STARTED", "TOOK", "ATTEMPT", "PARALLELISM")
			for _, r := range rescales.Rescales {
				var vs []string
				for _, v := range r.Vertices {
					vs = append(vs, fmt.Sprintf("%s %d→%d", v.Vertex, v.Before, v.After))
				}
				outcome := r.Outcome
				if outcome == "" {
					outcome = "IN_PROGRESS"
				}
				t.row(fmt.Sprint(r.ID), r.Trigger, outcome, fmtMillis(r.Start), fmtDurationMillis(r.Duration),
					fmt.Sprint(r.Attempt), strings.Join(vs, ", "))
			}
			return t.flush()
		}),
	}
}
