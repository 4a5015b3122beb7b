package tidecli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/standalone"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a job; --target local starts an AM and TaskManagers on this machine",
		ArgsUsage: "[-- job arguments...]",
		Description: `With --target local, starts an AM and --taskmanagers TaskManagers as child processes
of this binary, prints where the REST API, logs and output are, and stops everything on
Ctrl-C. Unless set otherwise it runs in reactive mode with file:// checkpoints under
--work-dir every second, and the AM listens on rest.port and jobmanager.rpc.port if set, else
on free ports it prints; --add-taskmanager-after starts one more TaskManager after the
given time so the job visibly scales up.

` + dynamicHelp,
		Flags: append(jobStartFlags(
			&cli.StringFlag{Name: "target", Aliases: []string{"t"}, Value: "local", Usage: "where to run: local, yarn-per-job or kubernetes-application"},
			&cli.IntFlag{Name: "taskmanagers", Aliases: []string{"n"}, Value: 2, Usage: "TaskManagers to start with"},
			&cli.DurationFlag{Name: "add-taskmanager-after", Usage: "start one more TaskManager after this long (0: never)"},
			&cli.StringFlag{Name: "work-dir", Value: filepath.Join(os.TempDir(), "tide-local"), Usage: "logs and checkpoints go here; one run at a time (unset: a run beside another takes the default's -2, -3, ...)"},
		), yarnRunFlags()...),
		Action: runRun,
	}
}

func runRun(c *cli.Context) error {
	if t := c.String("target"); t == kubeTarget {
		return runKubernetesApplication(c)
	} else if t == "yarn-per-job" {
		if c.IsSet(fromSavepointFlag) || c.IsSet(allowNonRestoredStateFlag) {
			return fmt.Errorf("--%s: not supported with --target yarn-per-job yet; use --target local or bin/standalone-job.sh", fromSavepointFlag)
		}
		return runYarnPerJob(c)
	} else if t != "local" {
		return fmt.Errorf("--target %q: expected local, yarn-per-job or %s", t, kubeTarget)
	}
	if n := c.Int("taskmanagers"); n < 0 {
		return fmt.Errorf("--taskmanagers %d: expected 0 or more", n)
	}
	cfg, name, args, _, err := loadJob(c)
	if err != nil {
		return err
	}
	workDir, err := filepath.Abs(c.String("work-dir"))
	if err != nil {
		return fmt.Errorf("--work-dir: %w", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	out := c.App.Writer
	opts := localRunOptions(c, cfg, name, args, workDir)
	cluster, err := standalone.StartLocal(ctx, opts)
	// Runs side by side on the default work directory: each further one takes the next of
	// <default>-2, -3, ... that is free. A --work-dir the user gave stays theirs.
	base := workDir
	for n := 2; errors.Is(err, standalone.ErrWorkDirInUse) && !c.IsSet("work-dir") && n <= maxDefaultWorkDirs; n++ {
		next := base + "-" + strconv.Itoa(n)
		fmt.Fprintf(out, "%s is in use by another tide run; this one works in %s\n", workDir, next)
		workDir = next
		opts = localRunOptions(c, cfg, name, args, workDir)
		cluster, err = standalone.StartLocal(ctx, opts)
	}
	if err != nil {
		return err
	}
	cluster.Describe(out)
	fmt.Fprintf(out, "  web page:  http://%s/  (the job, its rescales, TaskManagers, checkpoints, blocklist)\n", cluster.RESTAddress())
	fmt.Fprintf(out, "  settings:  %s\n", strings.Join(opts.Dynamic, " "))
	fmt.Fprintln(out, "Press Ctrl-C to stop.")
	if p, err := newProgress(out, cluster.RESTAddress(), cluster.LogDir()); err == nil {
		go p.run(ctx)
	} else {
		slog.Warn("not following the job's progress", "err", err)
	}
	var addTimer <-chan time.Time
	if d := c.Duration("add-taskmanager-after"); d > 0 {
		addTimer = time.After(d)
	}
	for {
		select {
		case <-addTimer:
			addTimer = nil
			id, err := cluster.AddTaskManager(ctx)
			if err != nil {
				fmt.Fprintf(out, "could not add a TaskManager: %v\n", err)
				continue
			}
			fmt.Fprintf(out, "started TaskManager %s: watch the job scale up at http://%s/#/rescales\n", id, cluster.RESTAddress())
		case <-cluster.AMDone():
			stopErr := cluster.Stop(context.Background())
			if err := cluster.AMErr(); err != nil {
				return fmt.Errorf("the AM exited: %w (see %s/jobmanager.log)", err, cluster.LogDir())
			}
			if status, diag, ok := localOutcome(cluster.LogDir()); ok {
				fmt.Fprintf(out, "the job ended: %s (%s); cluster stopped\n", termSafe(status), termSafe(diag))
			} else {
				fmt.Fprintln(out, "the job ended; cluster stopped")
			}
			return stopErr
		case <-ctx.Done():
			fmt.Fprintln(out, "stopping the local cluster...")
			return cluster.Stop(context.Background())
		}
	}
}

// maxDefaultWorkDirs bounds the work directories tide run tries when --work-dir is not set
// and the default is in use: the default and <default>-2 .. <default>-<max>.
const maxDefaultWorkDirs = 10

// localRunOptions are the local cluster tide run starts in workDir: the job, its -D
// settings with tide run's defaults for what the configuration leaves unset (reactive
// mode, file:// checkpoints under workDir every second, no cooldown), and the AM's ports
// when the configuration sets them (otherwise the AM binds ports the kernel picks).
func localRunOptions(c *cli.Context, cfg *conf.Config, name string, args []string, workDir string) standalone.LocalOptions {
	dyn := dynamicArgs(c)
	defaults := map[string]string{
		conf.ExecutionMode.Key():                         "reactive",
		conf.CheckpointsDir.Key():                        "file://" + filepath.Join(workDir, "checkpoints"),
		conf.CheckpointingInterval.Key():                 "1 s",
		conf.ExecutingCooldownAfterRescaling.Key():       "0 s",
		conf.ExecutingResourceStabilizationTimeout.Key(): "0 s",
	}
	for key, value := range defaults {
		if !cfg.IsSet(key) {
			dyn = append(dyn, key+"="+value)
		}
	}
	opts := standalone.LocalOptions{
		WorkDir: workDir, ConfigDir: c.String("configDir"), Dynamic: dyn,
		JobName: name, JobArgs: args, TaskManagers: c.Int("taskmanagers"),
		FromSavepoint: c.String(fromSavepointFlag), AllowNonRestoredState: c.Bool(allowNonRestoredStateFlag),
	}
	if cfg.IsSet(conf.RestPort.Key()) {
		opts.RESTPort = conf.RestPort.Get(cfg)
	}
	if cfg.IsSet(conf.JobManagerRPCPort.Key()) {
		opts.RPCPort = conf.JobManagerRPCPort.Get(cfg)
	}
	return opts
}
