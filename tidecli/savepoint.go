package tidecli

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core/checkpoint"
)

// checkFormatType refuses a --formatType the AM would not take, before sending anything.
func checkFormatType(c *cli.Context, _ string) error {
	if _, err := checkpoint.ParseFormatType(c.String("formatType")); err != nil {
		return usagef("--%v", err)
	}
	return nil
}

func savepointCommand() *cli.Command {
	return &cli.Command{
		Name:      "savepoint",
		Usage:     "take a savepoint of a job and wait for it",
		ArgsUsage: "JOB",
		Description: `Triggers a savepoint (POST /jobs/:jobid/savepoints) into --dir (default: the AM's
state.savepoints.dir) and polls until it completes; prints its location as a URI, which
--fromSavepoint takes back. The AM accepts --dir only under state.savepoints.dir or a directory
of state.savepoints.allowed-dirs. --formatType CANONICAL (the default) writes every subtask's
state in full in the backend-independent format, which any state backend restores (switch
backends through it); NATIVE copies a checkpoint in the backend's own format (with pebble and
execution.checkpointing.incremental, its database files), which only the same backend restores.
A savepoint is taken as a checkpoint of the job: the job needs checkpoint storage
(state.checkpoints.dir) even with --dir.

The job must be RUNNING. One that is not yet (CREATED while it waits for slots, RESTARTING)
is an error at once that says so, unless --wait is given: then the command waits for it to
run, and for the savepoint, within that time.`,
		Flags: append(clientFlags(),
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "target `directory`: an absolute path (taken literally) or a file:// or hdfs:// URI (percent-encoded), under the AM's allowed savepoint directories"},
			&cli.DurationFlag{Name: "wait", Value: 10 * time.Minute, Usage: "give up waiting after this long; given, it also waits for a job that is not RUNNING yet"},
			&cli.StringFlag{Name: "formatType", Aliases: []string{"type"}, Value: string(checkpoint.FormatCanonical),
				Usage: "savepoint format: CANONICAL (any state backend restores it) or NATIVE (the backend's own files)"}),
		OnUsageError: onUsageError,
		Action: jobAction(checkFormatType, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
			req := api.SavepointTriggerRequest{TargetDirectory: c.String("dir"), FormatType: c.String("formatType")}
			op, err := cc.triggerRunning(c.Context, j, "a savepoint", "Savepoint of job "+j.JID, "/jobs/"+j.JID+"/savepoints",
				c.Duration("wait"), c.IsSet("wait"),
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
