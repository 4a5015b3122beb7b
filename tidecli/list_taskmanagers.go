package tidecli

import (
	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func taskManagersCommand() *cli.Command {
	return &cli.Command{
		Name:         "taskmanagers",
		Usage:        "list the TaskManagers registered with the AM",
		Description:  "Shows each TaskManager's id, node, slots, free slots, last heartbeat and whether its node is blocked (GET /taskmanagers).",
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: clientAction(func(c *cli.Context, cc *clientCommand) error {
			tms, err := cc.api.TaskManagers(c.Context)
			if err != nil {
				return err
			}
			if cc.json {
				return cc.printJSON(api.TaskManagers{TaskManagers: tms})
			}
			if len(tms) == 0 {
				cc.progress("No TaskManagers are registered (start one with bin/taskmanager.sh start).")
				return nil
			}
			t := newTable(cc.out, "ID", "NODE", "SLOTS", "FREE", "LAST HEARTBEAT", "BLOCKED")
			for _, tm := range tms {
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
