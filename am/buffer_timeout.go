package am

import (
	"maps"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/rpc"
)

// registeredConfig is the configuration a registering TaskManager receives: the one the AM
// started with, and the execution.buffer-timeout in force (it reloads live) when it was
// reloaded since.
func (a *AM) registeredConfig() map[string]string {
	if a.reload == nil {
		return a.cfg.Conf
	}
	key := conf.ExecutionBufferTimeout.Key()
	v, ok := a.reload.inForce.Load().Value(key)
	if !ok || v == a.cfg.Conf[key] {
		return a.cfg.Conf
	}
	c := maps.Clone(a.cfg.Conf)
	c[key] = v
	return c
}

// reloadBufferTimeout sends a reloaded execution.buffer-timeout to every registered
// TaskManager; they apply it to the running subtasks' channels and sinks (loop goroutine).
func (a *AM) reloadBufferTimeout(rl conf.Reload, cfg *conf.Config) {
	key := conf.ExecutionBufferTimeout.Key()
	for _, ch := range rl.Applied {
		if ch.Key != key {
			continue
		}
		d := conf.ExecutionBufferTimeout.Get(cfg)
		a.log.Info("sending the reloaded execution.buffer-timeout to the TaskManagers", "buffer_timeout", d, "taskmanagers", len(a.sessions))
		for _, s := range a.sessions {
			s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_BufferTimeout{BufferTimeout: &rpc.PerfBufferTimeout{Nanos: int64(d)}}})
		}
		return
	}
}
