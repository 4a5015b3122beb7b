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
it, its outcome, when it started, how long it took, each vertex's parallelism before
and after, and what moving state cost: the key groups that changed TaskManager (MOVED),
the bytes the warm-up copies fetched before the switch (BYTES), how long the move waited
for them (WARMUP, "-" without a warm-up) and how long the job did not run (DOWNTIME: from
the start of the switch until every subtask of the new attempt ran).`,
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
			t := newTable(cc.out, "ID", "TRIGGER", "OUTCOME", "STARTED", "TOOK", "ATTEMPT", "MOVED", "BYTES", "WARMUP", "DOWNTIME", "PARALLELISM")
			for _, r := range rescales.Rescales {
				var vs []string
				for _, v := range r.Vertices {
					vs = append(vs, fmt.Sprintf("%s %d→%d", v.Vertex, v.Before, v.After))
				}
				outcome := r.Outcome
				if outcome == "" {
					outcome = "IN_PROGRESS"
				}
				warmup := "-"
				if r.Warmup != nil {
					warmup = fmt.Sprintf("%s (%d/%d ready)", fmtDurationMillis(r.WarmupDuration), r.Warmup.Ready, r.Warmup.Planned)
					if r.Warmup.TimedOut {
						warmup += " timed out"
					}
				}
				t.row(fmt.Sprint(r.ID), r.Trigger, outcome, fmtMillis(r.Start), fmtDurationMillis(r.Duration),
					fmt.Sprint(r.Attempt), fmt.Sprint(r.KeyGroupsMoved), fmtBytes(r.BytesMoved), warmup,
					fmtDurationMillis(r.SwitchDowntime), strings.Join(vs, ", "))
			}
			return t.flush()
		}),
	}
}

// fmtBytes renders a byte count in binary units ("0 B", "1.5 MiB").
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
