package tidecli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "cancel a job",
		ArgsUsage: "JOB",
		Description: `Asks the AM to cancel the job (PATCH /jobs/:jobid?mode=cancel); the AM then stops its
tasks and exits. With --wait, waits until the job is CANCELED (or the AM has exited).

With -m kubernetes:<cluster-id> (or -Dkubernetes.cluster-id=<cluster-id>) JOB may be left
out: tide cancels the cluster's job, waits for it to end (--wait, default 2m) and removes
every object of the cluster (Deployment, ConfigMaps, Service, Secret, RBAC, TaskManager
pods), also when its AM does not answer.`,
		Flags: append(clientFlags(),
			&cli.DurationFlag{Name: "wait", Usage: "wait up to this long for the job to be CANCELED (0: do not wait)"}),
		OnUsageError: onUsageError,
		Action:       cancelAction,
	}
}

// cancelAction cancels a job; on a tide cluster on Kubernetes it also removes the cluster.
func cancelAction(c *cli.Context) error {
	k, err := kubeClusterOf(c, c.String("jobmanager"))
	if err != nil {
		return err
	}
	if k == nil {
		return cancelJob(c)
	}
	if c.NArg() > 1 {
		return usagef("%s takes at most one JOB, got %q", c.Command.FullName(), c.Args().Slice())
	}
	kc, err := k.client(c.Context)
	if err != nil {
		return err
	}
	wait := c.Duration("wait")
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	cc := &clientCommand{out: c.App.Writer, json: c.Bool("json")}
	progress := cc.out
	if cc.json {
		progress = io.Discard
	}
	res, err := cancelKubeCluster(c.Context, kc, k.ns, k.id, c.Args().First(), progress, wait)
	if err != nil {
		return err
	}
	if cc.json {
		return cc.printJSON(res)
	}
	return nil
}

var cancelJob = jobAction(nil, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
	if err := cc.api.CancelJob(c.Context, j.JID); err != nil {
		return err
	}
	cc.progress("Cancellation of job %s (%s) requested.", j.JID, j.Name)
	state := "CANCELLING"
	if wait := c.Duration("wait"); wait > 0 {
		var err error
		if state, err = waitCanceled(c.Context, cc, j.JID, wait); err != nil {
			return err
		}
		cc.progress("Job %s is %s.", j.JID, state)
	}
	if cc.json {
		return cc.printJSON(map[string]string{"jid": j.JID, "state": state})
	}
	return nil
})

// waitCanceled polls the job's status until it is terminal; an AM that has exited after
// the cancellation counts as CANCELED.
func waitCanceled(ctx context.Context, cc *clientCommand, jobID string, wait time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	last := "CANCELLING"
	for {
		state, err := cc.api.JobState(ctx, jobID)
		switch {
		case err == nil:
			last = state
			if api.IsTerminal(state) {
				return state, nil
			}
		case exitCode(err) == exitUnreachable:
			return "CANCELED", nil // the AM exits once the job is cancelled
		case ctx.Err() == nil:
			return last, err
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("job %s still %s after %s", jobID, last, wait)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
