package tidecli

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name:      "checkpoint",
		Usage:     "trigger a checkpoint and wait for it",
		ArgsUsage: "JOB",
		Description: `Triggers a checkpoint now (POST /jobs/:jobid/checkpoints) and polls its status until it
completes or fails; prints the checkpoint id. The job must be RUNNING; with --wait given, the
command waits (within that time) for a job that is not RUNNING yet.`,
		Flags: append(clientFlags(),
			&cli.StringFlag{Name: "type", Value: "CONFIGURED", Usage: "checkpointType: CONFIGURED, FULL or INCREMENTAL"},
			&cli.DurationFlag{Name: "wait", Value: 10 * time.Minute, Usage: "give up waiting after this long; given, it also waits for a job that is not RUNNING yet"}),
		OnUsageError: onUsageError,
		Action: jobAction(checkCheckpointType, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
			op, err := cc.triggerRunning(c.Context, j, "a checkpoint", "Checkpoint of job "+j.JID, "/jobs/"+j.JID+"/checkpoints",
				c.Duration("wait"), c.IsSet("wait"),
				func(ctx context.Context) (string, error) {
					return cc.api.TriggerCheckpoint(ctx, j.JID, api.CheckpointTriggerRequest{CheckpointType: c.String("type")})
				},
				func(ctx context.Context, id string) (api.AsyncOperation, error) {
					return cc.api.CheckpointOperation(ctx, j.JID, id)
				})
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]any{"jid": j.JID, "operation": op.Operation})
			}
			cc.progress("Checkpoint %d of job %s completed.", result(op).CheckpointID, j.JID)
			return nil
		}),
	}
}

// checkCheckpointType refuses a --type the AM does not know before anything is sent.
func checkCheckpointType(c *cli.Context, _ string) error {
	switch c.String("type") {
	case "CONFIGURED", "FULL", "INCREMENTAL":
		return nil
	}
	return usagef("--type %q: expected CONFIGURED, FULL or INCREMENTAL", c.String("type"))
}
