package am

import (
	"context"
	"net"
	"strconv"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
)

// TaskManagers is GET /taskmanagers: the core's TaskManagers joined with the connection
// data of the view.
func (a *AM) TaskManagers(ctx context.Context) ([]api.TaskManager, error) {
	var tms []core.TaskManagerInfo
	if err := a.inspect(ctx, func() { tms = a.sched.TaskManagers() }); err != nil {
		return nil, unavailable(err)
	}
	conns := map[core.TaskManagerID]tmView{}
	for _, tm := range a.view.snapshot().TaskManagers {
		conns[tm.ID] = tm
	}
	now := a.clock.Now()
	out := make([]api.TaskManager, 0, len(tms))
	for _, tm := range tms {
		b := api.TaskManager{ID: string(tm.ID), Node: string(tm.Node), SlotsNumber: tm.Slots, FreeSlots: tm.Free,
			Blocked: tm.Blocked, Registered: millis(tm.Registered), TimeSinceLastHeartbeat: -1}
		if !tm.LastHeartbeat.IsZero() {
			b.TimeSinceLastHeartbeat = now.Sub(tm.LastHeartbeat).Milliseconds()
		}
		if c, ok := conns[tm.ID]; ok {
			b.DataAddress, b.DataPort, b.Path = c.DataAddress, portOf(c.DataAddress), c.DataAddress
		}
		out = append(out, b)
	}
	return out, nil
}

// portOf is the port of a host:port address, -1 if it has none.
func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return -1
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return -1
	}
	return port
}

// PendingWorkers is the pendingWorkers list of GET /taskmanagers: what the driver knows of
// the workers it was asked for that have not registered (none for a driver that starts no
// workers).
func (a *AM) PendingWorkers(context.Context) ([]api.PendingWorker, error) {
	pl, ok := a.driver.(drivers.PendingLister)
	if !ok {
		return nil, nil
	}
	ws := pl.PendingWorkers()
	out := make([]api.PendingWorker, 0, len(ws))
	for _, w := range ws {
		out = append(out, api.PendingWorker{ID: string(w.ID), Node: string(w.Node), State: w.State,
			Reason: w.Reason, Message: w.Message, Requested: millis(w.Since)})
	}
	return out, nil
}
