package tidecli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/yarn"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// yarnTargetPrefix is the -m form naming a YARN application instead of an AM address
// (Flink's -m yarn-application / -Dyarn.application.id).
const (
	yarnTargetPrefix = "yarn-application:"
	keyYarnAppID     = "yarn.application.id"
	yarnResolveWait  = 15 * time.Second
	yarnListTarget   = "yarn"
)

// yarnApplicationOf is the application a client command names: -m yarn-application:<id>,
// else -Dyarn.application.id=<id>; "" when it names none.
func yarnApplicationOf(c *cli.Context, addr string) string {
	if app, ok := strings.CutPrefix(addr, yarnTargetPrefix); ok {
		return app
	}
	for _, d := range dynamicArgs(c) {
		if k, v, ok := strings.Cut(d, "="); ok && strings.TrimSpace(k) == keyYarnAppID {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// resolveYarnAM is the REST address of app's AM: the tracking URL its current attempt
// registered with the ResourceManager, asked for on every command, so a command after a
// failover reaches the new AM. (The RM's web proxy stays the same across attempts but
// answers PATCH, which cancel and rescale use, with 501.) An application the RM does not
// know, one that has ended or whose AM has not registered yet is an error naming it.
func resolveYarnAM(c *cli.Context, app string) (string, error) {
	id, err := yarn.ParseApplicationID(app)
	if err != nil {
		return "", usagef("%s%s: %v", yarnTargetPrefix, app, err)
	}
	cfg, _, err := conf.Load(c.String("configDir"), dynamicArgs(c))
	if err != nil {
		return "", fmt.Errorf("configuration: %w", err)
	}
	rmAddr, ok := cfg.Value(keyRMAddress)
	if !ok {
		site, _, err := yarn.LoadYarnSite(os.Getenv)
		if err != nil {
			return "", fmt.Errorf("finding %s: the ResourceManager's address: %w", app, err)
		}
		rmAddr, _ = site.RMAddresses()
	}
	usr, err := hadoopUser()
	if err != nil {
		return "", err
	}
	rm, err := yarn.DialClientRM(rmAddr, usr, slog.Default())
	if err != nil {
		return "", err
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(c.Context, yarnResolveWait)
	defer cancel()
	r, err := rm.GetApplicationReport(ctx, id)
	if err != nil {
		return "", err
	}
	state := r.GetYarnApplicationState()
	if yarn.Ended(state) {
		return "", fmt.Errorf("YARN application %s is %v (final status %s): its AM is gone", app, state, yarn.FinalStatusString(r.GetFinalApplicationStatus()))
	}
	if r.GetApplicationType() != yarn.ApplicationType {
		return "", fmt.Errorf("YARN application %s is of type %q, not a tide application", app, r.GetApplicationType())
	}
	u := yarn.AMURL(r)
	if u == "" || state != yarnpb.YarnApplicationStateProto_RUNNING {
		return "", fmt.Errorf("YARN application %s is %v: its AM has not registered yet; try again shortly", app, state)
	}
	return u, nil
}

// onlyJob is the one job of a per-job application's AM.
func onlyJob(ctx context.Context, c *api.Client, app string) (api.JobOverview, error) {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return api.JobOverview{}, err
	}
	if len(jobs) != 1 {
		return api.JobOverview{}, fmt.Errorf("YARN application %s: its AM runs %d jobs, name one", app, len(jobs))
	}
	return jobs[0], nil
}

// listYarnApplications is tide list --target yarn: the tide applications the ResourceManager
// knows, with their state and the address of their web UI.
func listYarnApplications(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	web, err := rmWebFromConfig(cfg)
	if err != nil {
		return err
	}
	apps, err := web.Apps(c.Context, yarn.ApplicationType)
	if err != nil {
		return err
	}
	type row struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		State       string `json:"state"`
		FinalStatus string `json:"finalStatus"`
		Queue       string `json:"queue"`
		User        string `json:"user"`
		UI          string `json:"ui"`
	}
	rows := make([]row, 0, len(apps))
	for _, a := range apps {
		ui := strings.TrimRight(a.TrackingURL, "/")
		if !a.Ended() {
			ui = web.ProxyURL(a.ID) + "/"
		}
		rows = append(rows, row{a.ID, a.Name, a.State, a.FinalStatus, a.Queue, a.User, ui})
	}
	cc := &clientCommand{out: c.App.Writer, json: c.Bool("json")}
	if cc.json {
		return cc.printJSON(map[string]any{"applications": rows})
	}
	if len(rows) == 0 {
		cc.progress("No tide applications on YARN.")
		return nil
	}
	t := newTable(cc.out, "APPLICATION ID", "NAME", "STATE", "FINAL STATUS", "QUEUE", "USER", "UI")
	for _, r := range rows {
		t.row(r.ID, r.Name, r.State, r.FinalStatus, r.Queue, r.User, r.UI)
	}
	return t.flush()
}
