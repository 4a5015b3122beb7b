package tidecli

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func blocklistCommand() *cli.Command {
	return &cli.Command{
		Name:  "blocklist",
		Usage: "list, block and unblock nodes (FLIP-224)",
		Description: `A blocked node gets no new slots; with --evacuate its tasks also move elsewhere.
Blocks end at their timeout (default: the AM's blocklist.default-timeout).`,
		Subcommands: []*cli.Command{blocklistListCommand(), blocklistAddCommand(), blocklistRemoveCommand()},
	}
}

func blocklistListCommand() *cli.Command {
	return &cli.Command{
		Name:         "list",
		Usage:        "list the blocked nodes",
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: clientAction(func(c *cli.Context, cc *clientCommand) error {
			nodes, err := cc.api.Blocklist(c.Context)
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(nodes)
			}
			if len(nodes) == 0 {
				cc.progress("No nodes are blocked.")
				return nil
			}
			ids := make([]string, 0, len(nodes))
			for id := range nodes {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			t := newTable(cc.out, "NODE", "ACTION", "SINCE", "UNTIL", "CAUSE", "TASKMANAGERS")
			for _, id := range ids {
				n := nodes[id]
				t.row(id, n.Action, fmtMillis(n.StartTimestamp), fmtEnd(n.EndTimestamp), n.Cause, strings.Join(n.TaskManagers, ","))
			}
			return t.flush()
		}),
	}
}

func fmtEnd(ms int64) string {
	if ms == math.MaxInt64 || ms <= 0 {
		return "permanent"
	}
	return fmtMillis(ms)
}

func blocklistAddCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "block a node",
		ArgsUsage: "NODE",
		Flags: append(clientFlags(),
			&cli.BoolFlag{Name: "evacuate", Usage: "also move the node's running tasks elsewhere (MARK_BLOCKED_AND_EVACUATE_TASKS); --evacuate=false only marks it (MARK_BLOCKED); default: the AM's blocklist.default-action"},
			&cli.DurationFlag{Name: "timeout", Usage: "unblock after this long (default: the AM's blocklist.default-timeout)"},
			&cli.StringFlag{Name: "cause", Value: "blocked by an operator", Usage: "why the node is blocked"},
			&cli.BoolFlag{Name: "merge", Usage: "merge with an existing block of the node instead of failing"}),
		OnUsageError: onUsageError,
		Action: nodeAction(checkBlockTimeout, func(c *cli.Context, cc *clientCommand, node string) error {
			// Without --evacuate the AM's blocklist.default-action decides; --evacuate=false
			// asks for MARK_BLOCKED whatever the default.
			req := api.BlockNodeRequest{Cause: c.String("cause"), AllowMerge: c.Bool("merge")}
			if c.IsSet("evacuate") {
				req.Action = api.ActionMarkBlocked
				if c.Bool("evacuate") {
					req.Action = api.ActionMarkBlockedAndEvacuate
				}
			}
			if c.IsSet("timeout") {
				req.EndTimestamp = time.Now().Add(c.Duration("timeout")).UnixMilli()
			}
			n, err := cc.api.BlockNode(c.Context, node, req)
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(api.Blocklist{node: n})
			}
			cc.progress("Node %s blocked (%s) until %s: %s.", node, n.Action, fmtEnd(n.EndTimestamp), n.Cause)
			return nil
		}),
	}
}

// checkBlockTimeout refuses a --timeout that would end the block before it starts.
func checkBlockTimeout(c *cli.Context) error {
	if c.IsSet("timeout") && c.Duration("timeout") <= 0 {
		return usagef("--timeout %s: expected a positive duration such as 30m", c.Duration("timeout"))
	}
	return nil
}

func blocklistRemoveCommand() *cli.Command {
	return &cli.Command{
		Name:         "remove",
		Usage:        "unblock a node",
		ArgsUsage:    "NODE",
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: nodeAction(nil, func(c *cli.Context, cc *clientCommand, node string) error {
			if err := cc.api.UnblockNode(c.Context, node); err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]string{"node": node, "status": "unblocked"})
			}
			cc.progress("Node %s unblocked.", node)
			return nil
		}),
	}
}

func nodeArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 || strings.TrimSpace(c.Args().First()) == "" {
		return "", usagef("%s needs one NODE (a node id as tide taskmanagers shows it), got %q", c.Command.FullName(), c.Args().Slice())
	}
	return c.Args().First(), nil
}
