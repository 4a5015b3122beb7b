package tidecli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/yarn"
)

// rmWebFromConfig is the ResourceManager's web app: -Dyarn.resourcemanager.webapp.address, else
// yarn-site.xml under YARN_CONF_DIR or HADOOP_CONF_DIR.
func rmWebFromConfig(cfg *conf.Config) (*yarn.RMWeb, error) {
	if cfg != nil {
		if v, ok := cfg.Value(yarn.KeyRMWebAddress); ok && v != "" {
			return yarn.NewRMWeb(v), nil
		}
	}
	site, _, err := yarn.LoadYarnSite(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("the ResourceManager's web address (%s): %w", yarn.KeyRMWebAddress, err)
	}
	return yarn.NewRMWeb(site.RMWebAddress()), nil
}

// yarnCategory groups the commands that read YARN's ResourceManager and NodeManagers.
const yarnCategory = "YARN commands (talk to the ResourceManager and NodeManagers)"

// amLogTail is how much of a failed AM attempt's log tide run shows.
const (
	amLogTailBytes = 16 << 10
	amLogTailLines = 20
)

// reportFailedAttempts prints, for every AM attempt of app, the last error in its log and,
// for the last attempt, the tail of the log, read through the NodeManagers' log endpoints.
func reportFailedAttempts(ctx context.Context, out io.Writer, web *yarn.RMWeb, app string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	attempts, err := web.Attempts(ctx, app)
	if err != nil || len(attempts) == 0 {
		fmt.Fprintf(out, "The AM's logs are not reachable through the ResourceManager at %s (%v); try: tide logs %s\n", web.Base, err, app)
		return
	}
	for i, a := range attempts {
		log, err := yarn.ContainerLog(ctx, web.HTTP, a.NodeHTTP, a.ContainerID, amLogName, amLogTailBytes)
		if err != nil {
			fmt.Fprintf(out, "AM attempt %d (%s on %s): its log is not readable: %v\n", a.ID, a.ContainerID, a.NodeID, err)
			continue
		}
		if e := yarn.LastError(log); e != "" {
			fmt.Fprintf(out, "AM attempt %d (%s on %s) last error: %s\n", a.ID, a.ContainerID, a.NodeID, termSafe(e))
		} else {
			fmt.Fprintf(out, "AM attempt %d (%s on %s) logged no error\n", a.ID, a.ContainerID, a.NodeID)
		}
		if i == len(attempts)-1 {
			fmt.Fprintf(out, "---- last lines of %s of attempt %d (%s)\n", amLogName, a.ID, a.LogsLink)
			for _, l := range lastLines(log, amLogTailLines) {
				fmt.Fprintf(out, "  %s\n", termSafe(l))
			}
			fmt.Fprintf(out, "---- all of it: tide logs %s --container %s\n", app, a.ContainerID)
		}
	}
}

// amLogName is the AM container's log file (the jobmanager's stderr).
const amLogName = "jobmanager.log"

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// logsCommand is `tide logs APPLICATION_ID`: the containers' logs through the NodeManagers'
// web endpoints, the `yarn logs` habit.
func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Category:  yarnCategory,
		Usage:     "print the logs of a YARN application's containers (AM attempts and running TaskManagers)",
		ArgsUsage: "APPLICATION_ID",
		Description: `Reads the log files of the application's containers through the NodeManagers'
web endpoints (found through the ResourceManager's web app, yarn.resourcemanager.webapp.address
from yarn-site.xml under HADOOP_CONF_DIR, or -D). Without --container: every AM attempt's
container and the running containers of the current attempt. --follow prints what the
container (default: the current AM) appends until the application ends, moving to the next
AM attempt's container when one starts.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "container", Usage: "only this container's logs"},
			&cli.StringFlag{Name: "file", Usage: "only this log file (jobmanager.log, taskmanager.log, ...)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what is appended until the application ends"},
			configDirFlag(), dynamicFlag(),
		},
		Action: runLogs,
	}
}

func runLogs(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("tide logs takes one APPLICATION_ID, got %q", c.Args().Slice())
	}
	app := c.Args().First()
	if _, err := yarn.ParseApplicationID(app); err != nil {
		return usagef("tide logs %q: %v", app, err)
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	web, err := rmWebFromConfig(cfg)
	if err != nil {
		return err
	}
	ctx := c.Context
	info, err := web.App(ctx, app)
	if err != nil {
		return err
	}
	l := &logPrinter{out: c.App.Writer, web: web, file: c.String("file")}
	if c.Bool("follow") {
		return l.follow(ctx, info, c.String("container"))
	}
	containers, err := l.containers(ctx, info, c.String("container"))
	if err != nil {
		return err
	}
	for _, ct := range containers {
		if err := l.print(ctx, ct); err != nil {
			return err
		}
	}
	if c.String("container") == "" && info.Ended() {
		fmt.Fprintf(l.out, "(%s %s: the ResourceManager lists only its AM containers now; a TaskManager's logs: tide logs %s --container ID, its id is in the AM's log)\n", app, info.State, app)
	}
	return nil
}

type logPrinter struct {
	out  io.Writer
	web  *yarn.RMWeb
	file string
}

// container is one container whose logs to print and where its NodeManager is.
type container struct{ id, nodeHTTP, nodeID string }

// containers are the containers to print: the one asked for, else every AM attempt's and
// the current attempt's running ones.
func (l *logPrinter) containers(ctx context.Context, info yarn.AppInfo, only string) ([]container, error) {
	attempts, err := l.web.Attempts(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	var out []container
	seen := map[string]bool{}
	add := func(c container) {
		if !seen[c.id] && (only == "" || c.id == only) {
			seen[c.id] = true
			out = append(out, c)
		}
	}
	for _, a := range attempts {
		add(container{a.ContainerID, a.NodeHTTP, a.NodeID})
	}
	if !info.Ended() && len(attempts) > 0 {
		running, err := l.web.Containers(ctx, info.ID, attempts[len(attempts)-1].AttemptID)
		if err != nil {
			return nil, err
		}
		for _, r := range running {
			add(container{r.ID, r.NodeHTTP, r.NodeID})
		}
	}
	if only != "" && len(out) == 0 {
		// An ended container: the RM forgot it, its NodeManager still has its logs.
		c, err := l.findContainer(ctx, only)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// findContainer asks every NodeManager for the container's log files.
func (l *logPrinter) findContainer(ctx context.Context, id string) (container, error) {
	nodes, err := l.web.Nodes(ctx)
	if err != nil {
		return container{}, err
	}
	for _, n := range nodes {
		// A NodeManager answers for any container id of an application it knows, with no
		// files when the container never ran there.
		if files, err := yarn.ContainerLogFiles(ctx, l.web.HTTP, n.NodeHTTP, id); err == nil && len(files) > 0 {
			return container{id, n.NodeHTTP, n.ID}, nil
		}
	}
	return container{}, fmt.Errorf("container %s: no NodeManager of the %d the ResourceManager lists has its logs", id, len(nodes))
}

// skippedLogs are the NodeManager's own files in every container's log directory.
var skippedLogs = map[string]bool{"launch_container.sh": true, "directory.info": true}

func (l *logPrinter) files(ctx context.Context, c container) ([]string, error) {
	if l.file != "" {
		return []string{l.file}, nil
	}
	files, err := yarn.ContainerLogFiles(ctx, l.web.HTTP, c.nodeHTTP, c.id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if !skippedLogs[f.Name] {
			out = append(out, f.Name)
		}
	}
	return out, nil
}

func (l *logPrinter) print(ctx context.Context, c container) error {
	files, err := l.files(ctx, c)
	if err != nil {
		return err
	}
	for _, f := range files {
		s, err := yarn.ContainerLog(ctx, l.web.HTTP, c.nodeHTTP, c.id, f, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(l.out, "==> %s on %s: %s <==\n", c.id, c.nodeID, f)
		io.WriteString(l.out, termSafeText(s))
		if s != "" && !strings.HasSuffix(s, "\n") {
			fmt.Fprintln(l.out)
		}
	}
	return nil
}

// followPoll is how often --follow reads the logs again.
const followPoll = time.Second

// follow prints what the container's log files gain until the application ends; without a
// container it follows the current AM attempt, and the next one when it starts.
func (l *logPrinter) follow(ctx context.Context, info yarn.AppInfo, only string) error {
	printed := map[string]int{} // container/file -> bytes printed
	for {
		var cs []container
		if only != "" {
			all, err := l.containers(ctx, info, only)
			if err != nil {
				return err
			}
			cs = all
		} else {
			attempts, err := l.web.Attempts(ctx, info.ID)
			if err != nil {
				return err
			}
			if len(attempts) > 0 {
				a := attempts[len(attempts)-1]
				cs = []container{{a.ContainerID, a.NodeHTTP, a.NodeID}}
			}
		}
		for _, c := range cs {
			files, err := l.files(ctx, c)
			if err != nil {
				continue // not started yet, or its node is gone
			}
			for _, f := range files {
				s, err := yarn.ContainerLog(ctx, l.web.HTTP, c.nodeHTTP, c.id, f, 0)
				key := c.id + "/" + f
				if err != nil || len(s) <= printed[key] {
					continue
				}
				if _, ok := printed[key]; !ok {
					fmt.Fprintf(l.out, "==> %s on %s: %s <==\n", c.id, c.nodeID, f)
				}
				io.WriteString(l.out, termSafeText(s[printed[key]:]))
				printed[key] = len(s)
			}
		}
		if info.Ended() {
			fmt.Fprintf(l.out, "==> %s %s (final status %s) <==\n", info.ID, info.State, info.FinalStatus)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
		next, err := l.web.App(ctx, info.ID)
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		info = next
	}
}

// termSafeText is termSafe line by line: a log keeps its lines.
func termSafeText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termSafe(l)
	}
	return strings.Join(lines, "\n")
}
