package am

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
)

// KeyMaxSlots is Flink's slotmanager.number-of-slots.max: the most slots an active
// driver starts TaskManagers for. In reactive mode on YARN it is how far the job grows
// (tide asks for TaskManagers up to it and runs on whatever it gets). The keys of one
// driver live with the driver (yarn.KeyHeartbeat, ...); conf/options.go declares them.
const KeyMaxSlots = "slotmanager.number-of-slots.max"

// ActiveWorkerOptions configures the core for a driver that starts TaskManagers itself:
// one TaskManager per taskmanager.numberOfTaskSlots slots, at most
// slotmanager.number-of-slots.max slots (rounded down to whole TaskManagers). Reactive
// mode needs that maximum: it is the only bound on how many TaskManagers are asked for.
func ActiveWorkerOptions(c *conf.Config) (core.ActiveWorkers, error) {
	slots := conf.TaskManagerNumberOfTaskSlots.Get(c)
	aw := core.ActiveWorkers{Enabled: true, SlotsPerWorker: slots}
	raw, ok := c.Value(KeyMaxSlots)
	if ok && strings.TrimSpace(raw) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 1 {
			return aw, fmt.Errorf("%s = %q: expected a whole number of slots, at least 1", KeyMaxSlots, raw)
		}
		if n < slots {
			return aw, fmt.Errorf("%s = %d: expected at least taskmanager.numberOfTaskSlots (%d), one TaskManager", KeyMaxSlots, n, slots)
		}
		aw.MaxWorkers = n / slots
	}
	if conf.IsReactive(c) && aw.MaxWorkers == 0 {
		return aw, fmt.Errorf("execution-mode reactive with a driver that starts TaskManagers: set %s (the most slots to ask for; the job runs on whatever YARN grants up to it)", KeyMaxSlots)
	}
	return aw, nil
}
