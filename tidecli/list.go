package tidecli

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:        "list",
		Usage:       "list the jobs of the AM",
		Description: "Shows each job's id, name, status, start time and duration (GET /jobs/overview).",
		Flags: append(clientFlags(), &cli.StringFlag{Name: "target", Aliases: []string{"t"},
			Usage: "yarn: list the tide applications on YARN (state, UI address); kubernetes: the tide clusters of kubernetes.namespace (AM pod, job state, REST address); instead of an AM's jobs"}),
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			switch c.String("target") {
			case "":
				return listJobs(c)
			case yarnListTarget:
				if err := noArgs(c); err != nil {
					return err
				}
				return listYarnApplications(c)
			case kubeListTarget:
				if err := noArgs(c); err != nil {
					return err
				}
				return listKubeClusters(c)
			}
			return usagef("tide list --target %q: expected %q or %q (or no --target for the AM's jobs)", c.String("target"), yarnListTarget, kubeListTarget)
		},
	}
}

// listJobs is tide list: the AM's jobs.
var listJobs = clientAction(func(c *cli.Context, cc *clientCommand) error {
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
})

// itoa keeps table code short.
func itoa(n int) string { return strconv.Itoa(n) }
