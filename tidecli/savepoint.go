package tidecli

import (
	"time"

	"github.com/urfave/cli/v2"
)

func savepointCommand() *cli.Command {
	return &cli.Command{
		Name:      "savepoint",
		Usage:     "take a savepoint of a job and wait for it",
		ArgsUsage: "JOB",
		Description: `Triggers a savepoint (POST /jobs/:jobid/savepoints) into --dir (default: the AM's
state.savepoints.dir) and polls until it completes; prints its location.`,
		Flags: append(clientFlags(),
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "target `directory` (file:// or hdfs://)"},
			&cli.DurationFlag{Name: "wait", Value: 10 * time.Minute, Usage: "give up waiting after this long"}),
		OnUsageError: onUsageError,
		Action: jobAction(nil, func(c *cli.Context, cc *clientCommand, j jobSummary) error {
			body := map[string]any{"cancel-job": false}
			if d := c.String("dir"); d != "" {
				body["target-directory"] = d
			}
			op, raw, err := cc.trigger(c.Context, "Savepoint of job "+j.JID, "/jobs/"+j.JID+"/savepoints", body, c.Duration("wait"))
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]any{"jid": j.JID, "operation": raw})
			}
			cc.progress("Savepoint of job %s completed: %s", j.JID, op.Location)
			return nil
		}),
	}
}
