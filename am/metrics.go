package am

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	promreporter "github.com/uber-go/tally/v4/prometheus"

	"github.com/tidestream/tide/core"
)

const (
	// metricsReportInterval is how often tally hands values to the Prometheus registry.
	metricsReportInterval = 250 * time.Millisecond
	// metricsSampleInterval is how often the AM samples the core and the view.
	metricsSampleInterval = 500 * time.Millisecond
)

// metrics exports the declarations of metrics_defs.go through tally's Prometheus reporter
// into a registry of this AM's own (several AMs may share a test process).
type metrics struct {
	registry *prometheus.Registry
	closer   io.Closer
	jm, job  tally.Scope

	mu       sync.Mutex
	counters map[string]tally.Counter
	gauges   map[string]tally.Gauge
	last     map[string]int64 // cumulative value last added to each counter
	vertices map[core.VertexID]tally.Gauge
	// tasks holds the subtasks' metrics the TaskManagers send.
	tasks *taskMetrics
}

func newMetrics(jobID, jobName string) *metrics {
	reg := prometheus.NewRegistry()
	reporter := promreporter.NewReporter(promreporter.Options{Registerer: reg, Gatherer: reg})
	// Prometheus names allow no dots: tally needs the reporter's separator and sanitizer,
	// or it panics registering its own internal metrics.
	root, closer := tally.NewRootScope(tally.ScopeOptions{
		Prefix:                 "tide",
		CachedReporter:         reporter,
		Separator:              promreporter.DefaultSeparator,
		SanitizeOptions:        &promreporter.DefaultSanitizerOpts,
		OmitCardinalityMetrics: true,
	}, metricsReportInterval)
	jm := root.SubScope("jobmanager")
	m := &metrics{
		registry: reg, closer: closer, jm: jm,
		job:      jm.SubScope("job").Tagged(map[string]string{"job_id": jobID, "job_name": jobName}),
		counters: map[string]tally.Counter{}, gauges: map[string]tally.Gauge{}, last: map[string]int64{},
		vertices: map[core.VertexID]tally.Gauge{},
	}
	m.tasks = newTaskMetrics(m.job)
	for _, d := range allMetrics {
		if d == metricParallelism {
			continue // one gauge per vertex, made when the vertex first runs
		}
		s := m.scope(d)
		switch d.Kind {
		case counterMetric:
			m.counters[d.Name] = s.Counter(d.Name)
		case gaugeMetric:
			m.gauges[d.Name] = s.Gauge(d.Name)
		}
	}
	return m
}

func (m *metrics) scope(d metricDef) tally.Scope {
	if d.Scope == jobScope {
		return m.job
	}
	return m.jm
}

// set updates a gauge.
func (m *metrics) set(d metricDef, v float64) { m.gauges[d.Name].Update(v) }

// count brings a counter up to the cumulative value total (m.mu held).
func (m *metrics) count(d metricDef, total int64) {
	if delta := total - m.last[d.Name]; delta > 0 {
		m.counters[d.Name].Inc(delta)
		m.last[d.Name] = total
	}
}

// metricsSample is what one sample reads.
type metricsSample struct {
	core        core.Metrics
	warm        core.WarmupGauges
	parallelism map[core.VertexID]int
	snap        snapshot
	reloads     ReloadStats
	now         time.Time
}

// takeSample reads the core (loop goroutine, or after the loop ended).
func (a *AM) takeSample() metricsSample {
	return metricsSample{core: a.sched.Metrics(), warm: a.sched.WarmupGauges(), parallelism: a.sched.Parallelism(), snap: a.view.snapshot(),
		reloads: a.ReloadStats(), now: a.clock.Now()}
}

// update exports one sample.
func (m *metrics) update(s metricsSample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count(metricNumRestarts, int64(s.core.NumRestarts))
	m.count(metricNumRescales, int64(s.core.NumRescales))
	m.count(metricStaleEventsDropped, int64(s.core.StaleEventsDropped))
	m.set(metricNumBlockedNodes, float64(s.core.NumBlockedNodes))
	m.set(metricNumRegisteredTaskManagers, float64(s.core.RegisteredTaskManagers))
	m.set(metricTaskSlotsTotal, float64(s.core.TotalSlots))
	m.set(metricTaskSlotsAvailable, float64(s.core.FreeSlots))
	m.set(metricWarmupCopies, float64(s.warm.WarmupCopies))
	m.set(metricWarmupLag, float64(s.warm.WarmupLag))
	m.set(metricStandbyCopies, float64(s.warm.StandbyCopies))
	m.set(metricStandbyLag, float64(s.warm.StandbyLag))
	m.count(metricConfigReloads, int64(s.reloads.Reloads))
	m.count(metricConfigReloadFailures, int64(s.reloads.Failures))

	ck := s.snap.Checkpoints
	m.count(metricCompletedCheckpoints, ck.Counts.Completed)
	m.count(metricFailedCheckpoints, ck.Counts.Failed)
	if c := ck.Latest.Completed; c != nil {
		m.set(metricLastCheckpointDuration, float64(c.EndToEndDuration))
		m.set(metricLastCheckpointSize, float64(c.StateSize))
	}

	adopted, decision := failoverGauges(s.snap.Failover)
	m.set(metricLastFailoverAdopted, adopted)
	m.set(metricLastFailoverDecisionTime, decision)

	up, down, restarting := jobTimes(s.snap.Status, s.snap.Timestamps, s.now)
	m.set(metricUptime, float64(up.Milliseconds()))
	m.set(metricDowntime, float64(down.Milliseconds()))
	m.set(metricRestartingTime, float64(restarting.Milliseconds()))

	for v, g := range m.vertices {
		if _, ok := s.parallelism[v]; !ok {
			g.Update(0)
		}
	}
	for v, p := range s.parallelism {
		g, ok := m.vertices[v]
		if !ok {
			g = m.job.Tagged(map[string]string{"vertex": string(v)}).Gauge(metricParallelism.Name)
			m.vertices[v] = g
		}
		g.Update(float64(p))
	}
}

// jobTimes derives Flink's uptime, downtime and restartingTime from the time each status
// was last entered.
func jobTimes(status core.JobStatus, entered map[core.JobStatus]time.Time, now time.Time) (up, down, restarting time.Duration) {
	running, ran := entered[core.StatusRunning]
	if status == core.StatusRunning {
		up = now.Sub(running)
	}
	if ran && !status.IsTerminal() && status != core.StatusRunning {
		// the earliest status entered after the job last ran is when it stopped running
		left := now
		for _, st := range []core.JobStatus{core.StatusFailing, core.StatusRestarting, core.StatusCancelling, core.StatusCreated} {
			if t, ok := entered[st]; ok && t.After(running) && t.Before(left) {
				left = t
			}
		}
		down = now.Sub(left)
	}
	if t, ok := entered[core.StatusRestarting]; ok {
		switch {
		case status == core.StatusRestarting:
			restarting = now.Sub(t)
		case ran && running.After(t):
			restarting = running.Sub(t)
		}
	}
	return up, down, restarting
}

// sampleMetrics samples the core until the loop ends, then once more, and stops tally's
// reporting (its last report reaches the registry, which keeps serving).
func (a *AM) sampleMetrics() {
	t := time.NewTicker(metricsSampleInterval)
	defer t.Stop()
	defer a.metrics.closer.Close()
	for {
		var s metricsSample
		select {
		case <-t.C:
			if err := a.inspect(context.Background(), func() { s = a.takeSample() }); err != nil {
				continue
			}
			a.metrics.update(s)
			a.resolveOperations()
		case <-a.loopDone:
			_ = a.inspect(context.Background(), func() { s = a.takeSample() })
			a.metrics.update(s)
			a.resolveOperations()
			return
		}
	}
}

// Metrics serves GET /metrics in the Prometheus text exposition format.
func (a *AM) Metrics() http.Handler {
	return promhttp.HandlerFor(a.metrics.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
