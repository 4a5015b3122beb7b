package tidecli

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/stream"
)

func listJobsCommand() *cli.Command {
	return &cli.Command{
		Name:  "list-jobs",
		Usage: "list the jobs compiled into this binary",
		Flags: []cli.Flag{configDirFlag(), dynamicFlag()},
		Action: func(c *cli.Context) error {
			names := stream.Names()
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintln(c.App.Writer, n)
			}
			return nil
		},
	}
}
