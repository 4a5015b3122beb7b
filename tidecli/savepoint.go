package tidecli

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func savepointCommand() *cli.Command {
	return &cli.Command{
		Name:      "savepoint",
		Usage:     "take a savepoint of a job and wait for it",
		ArgsUsage: "JOB",
		Description: `Triggers a savepoint (POST /jobs/:jobid/savepoints) into --dir (default: the AM's
state.savepoints.dir) and polls until it completes; prints its location as a URI, which
--fromSavepoint takes back. The AM accepts --dir only under state.savepoints.dir or a directory
of state.savepoints.allowed-dirs.`,
		Flags: append(clientFlags(),
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "target `directory`: an absolute path (taken literally) or a file:// or hdfs:// URI (percent-encoded), under the AM's allowed savepoint directories"},
			&cli.DurationFlag{Name: "wait", Value: 10 * time.Minute, Usage: "give up waiting after this long"}),
		OnUsageError: onUsageError,
		Action: jobAction(nil, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
			req := api.SavepointTriggerRequest{TargetDirectory: c.String("dir")}
			op, err := cc.trigger(c.Context, "Savepoint of job "+j.JID, "/jobs/"+j.JID+"/savepoints", c.Duration("wait"),
				func(ctx context.Context) (string, error) { return cc.api.TriggerSavepoint(ctx, j.JID, req) },
				func(ctx context.Context, id string) (api.AsyncOperation, error) {
					return cc.api.SavepointOperation(ctx, j.JID, id)
				})
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]any{"jid": j.JID, "operation": op.Operation})
			}
			cc.progress("Savepoint of job %s completed: %s", j.JID, result(op).Location)
			return nil
		}),
	}
}
