package tidecli

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func taskManagersCommand() *cli.Command {
	return &cli.Command{
		Name:  "taskmanagers",
		Usage: "list the TaskManagers registered with the AM, and the requested ones not registered yet",
		Description: "Shows each TaskManager's id, node, slots, free slots, last heartbeat and whether its node is blocked; " +
			"then each TaskManager the AM requested that has not registered (a pod the scheduler cannot place, for " +
			"instance) with its state, node, how long it has waited and the reason its cluster gives (GET /taskmanagers).",
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: clientAction(func(c *cli.Context, cc *clientCommand) error {
			all, err := cc.api.TaskManagersAndPending(c.Context)
			if err != nil {
				return err
			}
			if cc.json {
				if all.TaskManagers == nil {
					all.TaskManagers = []api.TaskManager{}
				}
				if all.PendingWorkers == nil {
					all.PendingWorkers = []api.PendingWorker{}
				}
				return cc.printJSON(all)
			}
			if len(all.TaskManagers) == 0 {
				cc.progress("No TaskManagers are registered (start one with bin/taskmanager.sh start).")
			} else {
				t := newTable(cc.out, "ID", "NODE", "SLOTS", "FREE", "LAST HEARTBEAT", "BLOCKED")
				for _, tm := range all.TaskManagers {
					blocked := "no"
					if tm.Blocked {
						blocked = "yes"
					}
					t.row(tm.ID, tm.Node, itoa(tm.SlotsNumber), itoa(tm.FreeSlots), fmtDurationMillis(tm.TimeSinceLastHeartbeat)+" ago", blocked)
				}
				if err := t.flush(); err != nil {
					return err
				}
			}
			if len(all.PendingWorkers) == 0 {
				return nil
			}
			cc.printf("\nRequested TaskManagers not registered yet:\n")
			t := newTable(cc.out, "ID", "STATE", "NODE", "WAITING", "REASON", "MESSAGE")
			now := time.Now().UnixMilli()
			for _, p := range all.PendingWorkers {
				waited := int64(-1)
				if p.Requested > 0 {
					waited = max(now-p.Requested, 0)
				}
				t.row(p.ID, p.State, orDash(p.Node), fmtDurationMillis(waited), orDash(p.Reason), orDash(p.Message))
			}
			return t.flush()
		}),
	}
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
