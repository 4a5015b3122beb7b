package tidecli

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core/checkpoint"
)

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "stop a job with a savepoint (Flink's flink stop)",
		ArgsUsage: "JOB",
		Description: `Stops the job with a savepoint (POST /jobs/:jobid/stop): the AM takes a savepoint into
--savepointPath (default: its state.savepoints.dir), commits what two-phase sinks
pre-committed for it, and then cancels the job. The command polls the operation, prints the
savepoint's location (a URI, which --fromSavepoint takes back) and waits for the job to end.
The AM keeps its REST API up, read-only, after the job has ended until this result has been
read (at most rest.shutdown.grace-period, 30 s), then exits.

--savepointPath follows the rules of tide savepoint --dir: under state.savepoints.dir or a
directory of state.savepoints.allowed-dirs. --formatType as for tide savepoint. --drain
(Flink's: advance the watermark to the end of time before the savepoint) is passed on; the
AM refuses it, as tide's sources are unbounded.

The job must be RUNNING. One that is not yet (CREATED while it waits for slots, RESTARTING)
is an error at once that says so, unless --wait is given: then the command waits for it to
run, and for the stop, within that time. One that has ended is an error naming its state.`,
		Flags: append(clientFlags(),
			&cli.StringFlag{Name: "savepointPath", Aliases: []string{"p", "dir"}, Usage: "target `directory` of the savepoint: an absolute path (taken literally) or a file:// or hdfs:// URI (percent-encoded), under the AM's allowed savepoint directories"},
			&cli.BoolFlag{Name: "drain", Aliases: []string{"d"}, Usage: "ask the AM to drain the sources first (Flink's --drain; tide's AM refuses it)"},
			&cli.StringFlag{Name: "formatType", Aliases: []string{"type"}, Value: string(checkpoint.FormatCanonical),
				Usage: "savepoint format: CANONICAL (any state backend restores it) or NATIVE (the backend's own files)"},
			&cli.DurationFlag{Name: "wait", Value: 10 * time.Minute, Usage: "give up waiting after this long; given, it also waits for a job that is not RUNNING yet"}),
		OnUsageError: onUsageError,
		Action:       jobAction(checkFormatType, stopJob),
	}
}

// stopJob is tide stop's work once JOB resolved to job j.
func stopJob(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
	if jobEnded(j.State) {
		return fmt.Errorf("job %s (%s) is %s: it has ended or is being cancelled, so there is nothing to stop (start it again from its last savepoint with --fromSavepoint)",
			j.JID, j.Name, j.State)
	}
	req := api.StopRequest{TargetDirectory: c.String("savepointPath"), FormatType: c.String("formatType"), Drain: c.Bool("drain")}
	begin := time.Now()
	wait := c.Duration("wait")
	op, err := cc.triggerRunning(c.Context, j, "a stop-with-savepoint", "Stop-with-savepoint of job "+j.JID, "/jobs/"+j.JID+"/savepoints",
		wait, c.IsSet("wait"),
		func(ctx context.Context) (string, error) { return cc.api.StopWithSavepoint(ctx, j.JID, req) },
		func(ctx context.Context, id string) (api.AsyncOperation, error) {
			return cc.api.SavepointOperation(ctx, j.JID, id)
		})
	if err != nil {
		if exitCode(err) == exitUnreachable {
			return fmt.Errorf("%w (the AM of job %s went away before the stop's result could be read: look for the newest savepoint-* directory under the savepoint path, and at the AM's log)", err, j.JID)
		}
		return err
	}
	location := result(op).Location
	cc.progress("Savepoint completed. Path: %s", location)
	cc.progress("Job %s (%s) is stopping...", j.JID, j.Name)
	state, err := waitCanceled(c.Context, cc, j.JID, max(wait-time.Since(begin), 30*time.Second))
	if err != nil {
		return err
	}
	cc.progress("Job %s is %s.", j.JID, state)
	if cc.json {
		return cc.printJSON(map[string]any{"jid": j.JID, "operation": op.Operation, "state": state})
	}
	return nil
}
