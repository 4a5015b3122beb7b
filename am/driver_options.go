package am

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
)

// Keys read by active drivers (YARN); conf/options.go declares and validates them.
const (
	// KeyMaxSlots is Flink's slotmanager.number-of-slots.max: the most slots an active
	// driver starts TaskManagers for. In reactive mode on YARN it is how far the job
	// grows (tide asks for TaskManagers up to it and runs on whatever it gets).
	KeyMaxSlots = "slotmanager.number-of-slots.max"
	// KeyYarnHeartbeat is Flink's yarn.heartbeat.interval: the allocate interval while
	// nothing is pending (default 5 s).
	KeyYarnHeartbeat = "yarn.heartbeat.interval"
	// KeyYarnFastHeartbeat is Flink's yarn.heartbeat.container-request-interval: the
	// allocate interval while containers are pending (default 500 ms).
	KeyYarnFastHeartbeat = "yarn.heartbeat.container-request-interval"
	// KeyYarnNodeIDFormat is tide's tide.yarn.node-id-format: "host" (default; node ids
	// and blacklist entries are host names) or "host-port" (NodeIds host:port, for
	// clusters running several NodeManagers per host with
	// yarn.scheduler.include-port-in-node-name=true, such as MiniYARNCluster).
	KeyYarnNodeIDFormat = "tide.yarn.node-id-format"
)

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

// DurationKey reads an undeclared duration key, with a default when unset.
func DurationKey(c *conf.Config, key string, def time.Duration) (time.Duration, error) {
	raw, ok := c.Value(key)
	if !ok || strings.TrimSpace(raw) == "" {
		return def, nil
	}
	d, err := conf.ParseDuration(raw)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s = %q: expected a positive duration such as \"500 ms\" or \"5 s\"", key, raw)
	}
	return d, nil
}
