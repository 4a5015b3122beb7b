package tidecli

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// blockedNodeInfo is one node of GET /blocklist and the answer to PUT (FLIP-224).
type blockedNodeInfo struct {
	Action         string   `json:"action"`
	StartTimestamp int64    `json:"startTimestamp,string"`
	EndTimestamp   int64    `json:"endTimestamp,string"`
	Cause          string   `json:"cause"`
	TaskManagers   []string `json:"taskManagers"`
}

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
			var nodes map[string]blockedNodeInfo
			if err := cc.api.do(c.Context, "GET", "/blocklist", nil, &nodes); err != nil {
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
			&cli.BoolFlag{Name: "evacuate", Usage: "also move the node's running tasks elsewhere (MARK_BLOCKED_AND_EVACUATE_TASKS)"},
			&cli.DurationFlag{Name: "timeout", Usage: "unblock after this long (default: the AM's blocklist.default-timeout)"},
			&cli.StringFlag{Name: "cause", Value: "blocked by an operator", Usage: "why the node is blocked"},
			&cli.BoolFlag{Name: "merge", Usage: "merge with an existing block of the node instead of failing"}),
		OnUsageError: onUsageError,
		Action: nodeAction(checkBlockTimeout, func(c *cli.Context, cc *clientCommand, node string) error {
			action := "MARK_BLOCKED"
			if c.Bool("evacuate") {
				action = "MARK_BLOCKED_AND_EVACUATE_TASKS"
			}
			body := map[string]string{"action": action, "cause": c.String("cause")}
			if c.IsSet("timeout") {
				body["endTimestamp"] = strconv.FormatInt(time.Now().Add(c.Duration("timeout")).UnixMilli(), 10)
			}
			if c.Bool("merge") {
				body["allowMerge"] = "true"
			}
			var info json.RawMessage
			if err := cc.api.do(c.Context, "PUT", "/blocklist/nodes/"+url.PathEscape(node), body, &info); err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(map[string]json.RawMessage{node: info})
			}
			var n blockedNodeInfo
			if err := json.Unmarshal(info, &n); err != nil {
				return fmt.Errorf("PUT /blocklist/nodes/%s: unexpected answer: %w", node, err)
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
			if err := cc.api.do(c.Context, "DELETE", "/blocklist/node/"+url.PathEscape(node), nil, nil); err != nil {
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
