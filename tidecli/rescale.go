package tidecli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
)

// parseParallelism reads "L..U" or "N" (N..N); each bound is a positive number or -1 (the
// default bound).
func parseParallelism(s string) (api.Bounds, error) {
	bad := func(why string) (api.Bounds, error) {
		return api.Bounds{}, usagef("--parallelism %q: %s; expected L..U (for example 2..8) or N, with positive numbers or -1 for the default bound", s, why)
	}
	lo, hi, ranged := strings.Cut(strings.TrimSpace(s), "..")
	if !ranged {
		hi = lo
	}
	var b api.Bounds
	for _, p := range []struct {
		text string
		into *int
		name string
	}{{lo, &b.LowerBound, "lower bound"}, {hi, &b.UpperBound, "upper bound"}} {
		n, err := strconv.Atoi(strings.TrimSpace(p.text))
		if err != nil {
			return bad(p.name + " is not a number")
		}
		if n < 1 && n != -1 {
			return bad(p.name + " must be at least 1 (or -1)")
		}
		*p.into = n
	}
	if b.LowerBound > 0 && b.UpperBound > 0 && b.LowerBound > b.UpperBound {
		return bad("lower bound above upper bound")
	}
	return b, nil
}

func rescaleCommand() *cli.Command {
	return &cli.Command{
		Name:      "rescale",
		Usage:     "change a vertex's parallelism range (FLIP-291 resource requirements)",
		ArgsUsage: "JOB --vertex V --parallelism L..U",
		Description: `Reads the job's resource requirements, sets the named vertices to L..U and sends them
all back (PUT /jobs/:jobid/resource-requirements); the scheduler then rescales within
the range as slots allow. N alone means N..N; -1 means the default bound. Refused in
reactive mode (there every vertex uses all slots). A range the free slots allow is applied
at the next completed checkpoint (after the cooldown that follows a rescale). With --wait,
waits until the job runs with each named vertex inside its new range, saying why the
rescale waits while it does.`,
		Flags: append(clientFlags(),
			&cli.StringSliceFlag{Name: "vertex", Aliases: []string{"v"}, Usage: "vertex id or name (repeatable; see tide status)"},
			&cli.StringFlag{Name: "parallelism", Aliases: []string{"p"}, Usage: "new range `L..U` (or N)"},
			&cli.DurationFlag{Name: "wait", Usage: "wait up to this long for the job to run in the new range (0: do not wait)"},
		),
		OnUsageError: onUsageError,
		Action:       runRescale,
	}
}

func runRescale(c *cli.Context) error {
	var want api.Bounds
	check := func(c *cli.Context, ref string) error {
		if len(c.StringSlice("vertex")) == 0 {
			return usagef("rescale needs --vertex V (see the vertices in tide status %s)", ref)
		}
		if !c.IsSet("parallelism") {
			return usagef("rescale needs --parallelism L..U (or N)")
		}
		var err error
		want, err = parseParallelism(c.String("parallelism"))
		return err
	}
	return jobAction(check, func(c *cli.Context, cc *clientCommand, j api.JobOverview) error {
		return rescaleJob(c, cc, j, want)
	})(c)
}

// rescaleJob sets the --vertex vertices of job j to want and, with --wait, waits for the
// job to run in the new range.
func rescaleJob(c *cli.Context, cc *clientCommand, j api.JobOverview, want api.Bounds) error {
	ctx, names := c.Context, c.StringSlice("vertex")
	d, err := cc.api.Job(ctx, j.JID)
	if err != nil {
		return err
	}
	reqs, err := cc.api.ResourceRequirements(ctx, j.JID)
	if err != nil {
		return err
	}
	ids, err := vertexIDs(d, reqs, names)
	if err != nil {
		return err
	}
	old := make(map[string]api.Bounds, len(ids))
	for _, id := range ids {
		old[id] = reqs[id].Parallelism
		reqs[id] = api.VertexRequirements{Parallelism: want}
	}
	if err := cc.api.SetResourceRequirements(ctx, j.JID, reqs); err != nil {
		return err
	}
	for _, id := range ids {
		cc.progress("Vertex %s of job %s: parallelism %s (was %s).", id, j.JID, want, old[id])
	}
	if wait := c.Duration("wait"); wait > 0 {
		if d, err = waitInRange(ctx, cc, j.JID, ids, want, wait); err != nil {
			return err
		}
	}
	if cc.json {
		return cc.printJSON(map[string]any{"jid": j.JID, "resource-requirements": reqs, "vertices": d.Vertices, "state": d.State})
	}
	return nil
}

// vertexIDs maps the --vertex names to vertex ids of the requirements.
func vertexIDs(d api.JobDetails, reqs api.ResourceRequirements, names []string) ([]string, error) {
	byName := map[string]string{}
	for _, v := range d.Vertices {
		byName[v.Name] = v.ID
	}
	var ids []string
	for _, n := range names {
		if _, ok := reqs[n]; ok {
			ids = append(ids, n)
			continue
		}
		if id, ok := byName[n]; ok {
			if _, ok := reqs[id]; ok {
				ids = append(ids, id)
				continue
			}
		}
		known := make([]string, 0, len(reqs))
		for id := range reqs {
			known = append(known, id)
		}
		sort.Strings(known)
		return nil, usagef("--vertex %q: job %s has no such vertex; its vertices are %s", n, d.JID, strings.Join(known, ", "))
	}
	return ids, nil
}

// waitInRange polls the job until it runs with every vertex of ids inside want.
func waitInRange(ctx context.Context, cc *clientCommand, jobID string, ids []string, want api.Bounds, wait time.Duration) (api.JobDetails, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	cc.progress("Waiting up to %s for the job to run in the new range...", wait)
	var last api.JobDetails
	said := ""
	for {
		d, err := cc.api.Job(ctx, jobID)
		if err == nil {
			last = d
			// Say why the rescale waits, once per reason.
			if p := d.PendingRescale; p != nil && p.Reason != said {
				said = p.Reason
				cc.progress("  pending: %s", pendingLine(*p))
			}
			if d.State == "RUNNING" && inRange(d, ids, want) {
				for _, v := range d.Vertices {
					cc.progress("  %s: parallelism %d", v.ID, v.Parallelism)
				}
				return d, nil
			}
		} else if ctx.Err() == nil {
			return d, err
		}
		select {
		case <-ctx.Done():
			why := "no rescale is pending: the slots do not allow the range (see tide taskmanagers)"
			if p := last.PendingRescale; p != nil {
				why = "the rescale waits: " + pendingLine(*p)
			}
			return last, fmt.Errorf("job %s is %s with vertices %s after %s, not yet in %s; %s",
				jobID, last.State, describeVertices(last), wait, want, why)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func inRange(d api.JobDetails, ids []string, want api.Bounds) bool {
	for _, id := range ids {
		found := false
		for _, v := range d.Vertices {
			if v.ID != id {
				continue
			}
			found = true
			lo, hi := want.LowerBound, want.UpperBound
			if lo == -1 {
				lo = 1
			}
			if hi == -1 {
				hi = v.MaxParallelism
			}
			if v.Parallelism < lo || v.Parallelism > hi {
				return false
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func describeVertices(d api.JobDetails) string {
	parts := make([]string, 0, len(d.Vertices))
	for _, v := range d.Vertices {
		parts = append(parts, fmt.Sprintf("%s=%d", v.ID, v.Parallelism))
	}
	return strings.Join(parts, ", ")
}
