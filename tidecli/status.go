package tidecli

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show a job's status, attempt, per-vertex parallelism, rates and back-pressure",
		ArgsUsage: "JOB",
		Description: `JOB is the job id, a unique prefix of it, or the job name. Shows GET /jobs/:jobid and
each vertex's resource requirements (lowerBound..upperBound) and task metrics
(GET /jobs/:jobid/vertices/:vertexid): records in and out per second over its subtasks,
and the busiest subtask's busy and back-pressured share of time (ok up to 10%, low up to
50%, high above). When a rescale is pending, says why it waits: cooldown until T, waiting
for a checkpoint, min-parallelism-increase not met, slots missing (how many), TaskManagers
on their way. When the job has failed since it started, shows the newest failure
(GET /jobs/:jobid/exceptions): when, which attempt, the subtask and TaskManager, and the
error.`,
		Flags:        clientFlags(),
		OnUsageError: onUsageError,
		Action: jobAction(nil, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
			d, err := cc.api.Job(c.Context, j.JID)
			if err != nil {
				return err
			}
			reqs, err := cc.api.ResourceRequirements(c.Context, j.JID)
			if api.IsStatus(err, http.StatusNotFound, http.StatusMethodNotAllowed) {
				reqs, err = nil, nil // an AM without the endpoint: show what there is
			}
			if err != nil {
				return err
			}
			metrics, err := vertexMetrics(c.Context, cc, d)
			if err != nil {
				return err
			}
			failure, failed, earlier, err := cc.api.NewestException(c.Context, j.JID)
			if err != nil {
				return err
			}
			if cc.json {
				out := map[string]any{"job": d, "resource-requirements": reqs, "vertex-metrics": metrics}
				if failed {
					out["last-failure"] = failure
				}
				return cc.printJSON(out)
			}
			cc.printf("Job:       %s (%s)\n", d.JID, d.Name)
			since := ""
			if ts, ok := d.Timestamps[d.State]; ok && ts > 0 {
				since = " since " + fmtMillis(ts)
			}
			cc.printf("Status:    %s%s\n", d.State, since)
			cc.printf("Attempt:   %d\n", d.Attempt)
			cc.printf("Started:   %s (%s ago)\n", fmtMillis(d.StartTime), fmtDurationMillis(d.Duration))
			if p := d.PendingRescale; p != nil {
				cc.printf("Pending:   %s\n", pendingLine(*p))
			}
			if failed {
				more := ""
				if earlier {
					more = " (earlier ones: GET /jobs/" + j.JID + "/exceptions)"
				}
				cc.printf("Failure:   %s%s\n", failureLine(failure), more)
			}
			fmt.Fprintln(cc.out)
			t := newTable(cc.out, "VERTEX", "PARALLELISM", "REQUIRED", "MAX PARALLELISM", "STATUS", "IN/S", "OUT/S", "BUSY", "BACKPRESSURE")
			for _, v := range d.Vertices {
				required := "-"
				if b, ok := reqs[v.ID]; ok {
					required = b.Parallelism.String()
				}
				name := v.Name
				if name != v.ID && name != "" {
					name = v.ID + " (" + v.Name + ")"
				} else {
					name = v.ID
				}
				status := v.Status
				if status == "" {
					status = "-"
				}
				m, ok := metrics[v.ID]
				t.row(append([]string{name, itoa(v.Parallelism), required, itoa(v.MaxParallelism), status}, metricsColumns(m, ok)...)...)
			}
			return t.flush()
		}),
	}
}

// pendingLine describes a pending rescale: why it waits, until when, and its target.
func pendingLine(p api.PendingRescale) string {
	line := p.String()
	if len(p.Target) > 0 {
		ids := make([]string, 0, len(p.Target))
		for id := range p.Target {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = fmt.Sprintf("%s=%d", id, p.Target[id])
		}
		line += "; target " + strings.Join(parts, ", ")
	}
	return line
}
