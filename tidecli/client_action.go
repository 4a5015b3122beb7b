package tidecli

import (
	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/yarn"
)

// The client commands share one shape: read the arguments, check the flags that need no
// AM, connect to the AM, and only then do the command's own work. The helpers below are
// that shape; each command keeps only its checks and its work.

// clientAction is the Action of a command without arguments.
func clientAction(run func(c *cli.Context, cc *clientCommand) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if err := noArgs(c); err != nil {
			return err
		}
		cc, err := newClientCommand(c)
		if err != nil {
			return err
		}
		return run(c, cc)
	}
}

// nodeAction is the Action of a command on one NODE. check (nil: none) runs before the
// AM is contacted, so its usage errors send nothing.
func nodeAction(check func(c *cli.Context) error, run func(c *cli.Context, cc *clientCommand, node string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		node, err := nodeArg(c)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(c); err != nil {
				return err
			}
		}
		cc, err := newClientCommand(c)
		if err != nil {
			return err
		}
		return run(c, cc, node)
	}
}

// jobAction is the Action of a command on one JOB: check (nil: none) sees the JOB
// argument before the AM is contacted; run gets the job JOB resolves to.
func jobAction(check func(c *cli.Context, ref string) error, run func(c *cli.Context, cc *clientCommand, j api.JobOverview) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		var ref string
		k, err := kubeClusterOf(c, c.String("jobmanager"))
		if err != nil {
			return err
		}
		if k == nil || c.NArg() > 0 {
			// A tide cluster on Kubernetes runs one job: JOB may be left out.
			if ref, err = jobArg(c); err != nil {
				return err
			}
		}
		if check != nil {
			if err := check(c, ref); err != nil {
				return err
			}
		}
		app := ""
		if _, perr := yarn.ParseApplicationID(ref); perr == nil && c.String("jobmanager") == "" {
			// JOB is a YARN application id: its AM's one job.
			app = ref
			if err := c.Set("jobmanager", yarnTargetPrefix+app); err != nil {
				return err
			}
		}
		cc, err := newClientCommand(c)
		if err != nil {
			return err
		}
		if k != nil && ref == "" {
			j, err := onlyJobOf(c.Context, cc.api, "tide cluster "+k.id)
			if err != nil {
				return err
			}
			return run(c, cc, j)
		}
		if app != "" {
			j, err := onlyJob(c.Context, cc.api, app)
			if err != nil {
				return err
			}
			return run(c, cc, j)
		}
		j, err := resolveJob(c.Context, cc.api, ref)
		if err != nil {
			return err
		}
		return run(c, cc, j)
	}
}
