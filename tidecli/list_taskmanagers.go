package tidecli

import "github.com/urfave/cli/v2"

// taskManagerEntry is one entry of GET /taskmanagers.
type taskManagerEntry struct {
	ID                     string `json:"id"`
	Node                   string `json:"node"`
	SlotsNumber            int    `json:"slotsNumber"`
	FreeSlots              int    `json:"freeSlots"`
	TimeSinceLastHeartbeat int64  `json:"timeSinceLastHeartbeat"`
	Blocked                bool   `json:"blocked"`
}

func taskManagersCommand() *cli.Command {
	return &cli.Command{
		Name:         "taskmanagers",
		Usage:        "list the TaskManagers registered with the AM",
		Description:  "Shows each TaskManager's id, node, slots, free slots, last heartbeat and whether its node is blocked (GET /taskmanagers).",
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: clientAction(func(c *cli.Context, cc *clientCommand) error {
			var body struct {
				TaskManagers []taskManagerEntry `json:"taskmanagers"`
			}
			if printed, err := cc.getForTable(c.Context, "/taskmanagers", &body); printed || err != nil {
				return err
			}
			if len(body.TaskManagers) == 0 {
				cc.progress("No TaskManagers are registered (start one with bin/taskmanager.sh start).")
				return nil
			}
			t := newTable(cc.out, "ID", "NODE", "SLOTS", "FREE", "LAST HEARTBEAT", "BLOCKED")
			for _, tm := range body.TaskManagers {
				blocked := "no"
				if tm.Blocked {
					blocked = "yes"
				}
				t.row(tm.ID, tm.Node, itoa(tm.SlotsNumber), itoa(tm.FreeSlots), fmtDurationMillis(tm.TimeSinceLastHeartbeat)+" ago", blocked)
			}
			return t.flush()
		}),
	}
}
