package tidecli

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:         "list",
		Usage:        "list the jobs of the AM",
		Description:  "Shows each job's id, name, status, start time and duration (GET /jobs/overview).",
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: clientAction(func(c *cli.Context, cc *clientCommand) error {
			jobs, err := cc.api.Jobs(c.Context)
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(api.JobsOverview{Jobs: jobs})
			}
			if len(jobs) == 0 {
				cc.progress("No jobs.")
				return nil
			}
			t := newTable(cc.out, "JOB ID", "NAME", "STATUS", "START TIME", "DURATION")
			for _, j := range jobs {
				t.row(j.JID, j.Name, j.State, fmtMillis(j.StartTime), fmtDurationMillis(j.Duration))
			}
			return t.flush()
		}),
	}
}

// itoa keeps table code short.
func itoa(n int) string { return strconv.Itoa(n) }
