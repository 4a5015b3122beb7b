package tidecli

import "github.com/urfave/cli/v2"

// clientCommands are the commands that operate a running job through its AM's REST API.
func clientCommands() []*cli.Command {
	cmds := []*cli.Command{
		listCommand(), statusCommand(), cancelCommand(), rescaleCommand(), checkpointCommand(),
		savepointCommand(), stopCommand(), rescalesCommand(), taskManagersCommand(), blocklistCommand(),
	}
	for _, c := range cmds {
		c.Category = clientCategory
	}
	return cmds
}

// rootAction runs for "tide" without a known command: help, or a usage error (exit 2)
// naming the unknown command.
func rootAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unknown command %q: see tide --help", c.Args().First())
	}
	return cli.ShowAppHelp(c)
}
