package tidecli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/yarn"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// Keys of tide run --target yarn-per-job that conf does not declare (read as written).
const (
	keyRMAddress        = "yarn.resourcemanager.address"
	keySchedulerAddress = "yarn.resourcemanager.scheduler.address"
	keyStagingDir       = "yarn.staging-directory" // Flink's key
)

// yarnRunFlags are run's flags for --target yarn-per-job.
func yarnRunFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "detached", Aliases: []string{"d"}, Usage: "yarn-per-job, kubernetes-application: return once the job is RUNNING instead of following it to the end"},
		&cli.StringFlag{Name: "binary", Usage: "yarn-per-job: the tide binary to ship (default: this one)"},
		&cli.BoolFlag{Name: "cancel-on-exit", Aliases: []string{"shutdownOnAttachedExit", "sae"},
			Usage: "yarn-per-job, kubernetes-application: kill the application (remove the cluster) when an attached tide run is interrupted (Ctrl-C)"},
	}
}

// stagingRemovalWait bounds the wait for the AM to remove the staging directory after
// the application finished.
const stagingRemovalWait = 15 * time.Second

// runYarnPerJob submits the job as its own YARN application and follows it.
func runYarnPerJob(c *cli.Context) error {
	t0 := time.Now()
	cfg, name, args, job, err := loadJob(c)
	if err != nil {
		return err
	}
	if err := checkOutputsForYarn(name, job); err != nil {
		return err
	}
	if conf.IsReactive(cfg) {
		// Fail here, not in the AM container.
		if _, err := am.ActiveWorkerOptions(cfg); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	out := c.App.Writer

	site, sitePath, siteErr := yarn.LoadYarnSite(os.Getenv)
	rmAddr, schedAddr := site.RMAddresses()
	if v, ok := cfg.Value(keyRMAddress); ok {
		rmAddr = v
	} else if siteErr != nil {
		return fmt.Errorf("the ResourceManager's address: %w", siteErr)
	}
	if v, ok := cfg.Value(keySchedulerAddress); ok {
		schedAddr = v
	}
	usr, err := hadoopUser()
	if err != nil {
		return err
	}
	stagingRoot, err := stagingURI(cfg, usr)
	if err != nil {
		return err
	}
	binary := c.String("binary")
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return fmt.Errorf("finding this binary to ship (give --binary): %w", err)
		}
	}
	rm, err := yarn.DialClientRM(rmAddr, usr, slog.Default())
	if err != nil {
		return err
	}
	defer rm.Close()
	// Retried upload errors stay out of the user's terminal (at --log-level debug they
	// show); one that exhausts its retries fails tide run with the whole story.
	staging, err := storage.Open(ctx, stagingRoot, storage.Options{User: usr, Logger: quietRetries()})
	if err != nil {
		return fmt.Errorf("the YARN staging directory %s (%s): %w", stagingRoot, keyStagingDir, err)
	}
	defer staging.Close()

	tmSlots := conf.TaskManagerNumberOfTaskSlots.Get(cfg)
	tmVCores := conf.YarnContainersVcores.Get(cfg)
	if tmVCores <= 0 {
		tmVCores = tmSlots
	}
	appName := conf.YarnApplicationName.Get(cfg)
	if appName == "" {
		appName = name
	}
	// The AM's RPC port is off loopback on any real cluster, so the AM and TaskManagers
	// always authenticate on YARN: with the configured secret, else one made for this
	// application. It travels in the containers' credentials, never in the staged files.
	secret, _, err := clusterauth.Load(conf.InternalSecret.Get(cfg), conf.InternalSecretFile.Get(cfg))
	if err != nil {
		return err
	}
	if !secret.Set() {
		if secret, err = clusterauth.Generate(); err != nil {
			return err
		}
	}
	shipConf := hadoopConfFiles()
	sub := yarn.Submission{
		RM: rm, Staging: uploadProgress{Storage: staging, out: out}, Binary: binary, HadoopConf: shipConf,
		Tokens:            yarnCredentials(secret),
		Config:            func(dir string) ([]byte, error) { return shippedConfig(cfg, dir) },
		JobName:           name,
		JobArgs:           args,
		JobManagerDynamic: jobManagerOverrides(cfg),
		AppName:           appName,
		Queue:             conf.YarnApplicationQueue.Get(cfg),
		Attempts:          conf.YarnApplicationAttempts.Get(cfg),
		FailuresValidity:  conf.YarnAttemptFailuresValidityInterval.Get(cfg),
		AMMemoryMB:        mebibytes(conf.JobManagerMemoryProcessSize.Get(cfg)),
		AMVCores:          int32(conf.YarnAppMasterVcores.Get(cfg)),
		TMMemoryMB:        mebibytes(conf.TaskManagerMemoryProcessSize.Get(cfg)),
		TMVCores:          int32(tmVCores),
		RMAddress:         rmAddr, SchedulerAddress: schedAddr, User: usr,
		Env:    yarnAMEnv(c.String("log-level"), len(shipConf) > 0),
		Logger: slog.Default(),
	}
	if sitePath != "" {
		slog.Info("YARN configuration", "file", sitePath, "resourcemanager", rmAddr, "scheduler", schedAddr)
	}
	for _, w := range submissionWarnings(ctx, cfg, rm) {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s\n", w)
	}
	app, err := yarn.Submit(ctx, sub)
	if err != nil {
		return err
	}
	appID := yarn.ApplicationIDString(app.ID)
	fmt.Fprintf(out, "Submitted application %s (staging %s) in %s\n", appID, app.StagingDir, time.Since(t0).Round(time.Millisecond))
	var runningAt time.Duration
	var amURL string // the current attempt's AM
	var last yarn.Progress
	var failures failureReporter
	p, err := yarn.Follow(ctx, rm, app.ID, yarn.FollowOptions{
		UntilRunning: c.Bool("detached"),
		OnChange: func(p yarn.Progress) {
			if p.TrackingURL != "" && p.TrackingURL != amURL {
				if amURL != "" {
					fmt.Fprintf(out, "%s: AM attempt %d started at %s (the previous AM at %s is gone; tide commands with -m %s%s follow it)\n",
						appID, p.Report.GetCurrentApplicationAttemptId().GetAttemptId(), termSafe(p.TrackingURL), termSafe(amURL), yarnTargetPrefix, appID)
				}
				amURL = p.TrackingURL
			}
			if p.Failure != nil && !yarn.Ended(p.State) {
				if line, ok := failures.line(*p.Failure); ok {
					fmt.Fprintf(out, "%s: failure: %s\n", appID, termSafe(line))
				}
			}
			changed := p.State != last.State || p.JobState != last.JobState || p.TrackingURL != last.TrackingURL
			last = p
			switch {
			case !changed: // only a new failure
			case yarn.Ended(p.State):
				// The AM is gone: its job's last state would be stale.
				fmt.Fprintf(out, "%s: %v (final status %s)\n", appID, p.State, yarn.FinalStatusString(p.Report.GetFinalApplicationStatus()))
			case p.JobState != "":
				fmt.Fprintf(out, "%s: job %s (application %v)\n", appID, termSafe(p.JobState), p.State)
				if p.JobState == "RUNNING" && runningAt == 0 {
					runningAt = time.Since(t0)
					fmt.Fprintf(out, "Job RUNNING %s after tide run; tracking URL %s\n", runningAt.Round(time.Millisecond), termSafe(p.TrackingURL))
				}
			case p.TrackingURL != "":
				fmt.Fprintf(out, "%s: %v, tracking URL %s\n", appID, p.State, termSafe(p.TrackingURL))
			default:
				fmt.Fprintf(out, "%s: %v\n", appID, p.State)
			}
		},
	})
	if err != nil && ctx.Err() != nil {
		stop() // a second Ctrl-C ends tide run at once
		return interrupted(c, rm, staging, app, name, p.TrackingURL, retainedInStaging(cfg))
	}
	if err != nil && !errors.Is(err, yarn.ErrApplicationFailed) {
		return err // lost the RM: the application's end is unknown
	}
	if err == nil && c.Bool("detached") {
		fmt.Fprintf(out, "Detached: %s runs at %s; its staging directory %s goes when it succeeds or is cancelled (unless it keeps a checkpoint there)\n", appID, termSafe(p.TrackingURL), app.StagingDir)
		return nil
	}
	reportStaging(c.Context, out, staging, appID, app.StagingDir, p.Report.GetFinalApplicationStatus(), retainedInStaging(cfg))
	if err != nil {
		if web, werr := rmWebFromConfig(cfg); werr == nil && p.Report.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_KILLED {
			reportFailedAttempts(c.Context, out, web, appID)
		}
		return err
	}
	fmt.Fprintf(out, "%s %v: final status %s\n", appID, p.State, yarn.FinalStatusString(p.Report.GetFinalApplicationStatus()))
	return nil
}

// interrupted handles Ctrl-C during an attached tide run: with --cancel-on-exit it kills
// the application and removes its staging directory (unless retained, retainedInStaging,
// and a checkpoint completed), otherwise it says how to stop the application, which goes on.
func interrupted(c *cli.Context, rm *yarn.ClientRM, staging storage.Storage, app *yarn.Application, job, tracking string, retained bool) error {
	out := c.App.Writer
	appID := yarn.ApplicationIDString(app.ID)
	if c.Bool("cancel-on-exit") {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Context), killWait)
		defer cancel()
		fmt.Fprintf(out, "Interrupted: killing %s (--cancel-on-exit)\n", appID)
		if _, err := rm.ForceKillApplication(ctx, app.ID, "tide run interrupted with --cancel-on-exit"); err != nil {
			return fmt.Errorf("killing %s after the interrupt: %w", appID, err)
		}
		// A killed AM cannot clean up after itself: remove the staging directory here
		// once the application has ended and its AM has stopped writing into it (see
		// run_yarn_kill_cleanup.go).
		if err := awaitEnd(ctx, rm, app.ID); err != nil {
			return fmt.Errorf("killing %s: %w; its staging directory %s stays", appID, err, app.StagingDir)
		}
		if err := awaitAMStopped(ctx, tracking); err != nil {
			return fmt.Errorf("%s killed, but its AM has not stopped; its staging directory %s stays: %w", appID, app.StagingDir, err)
		}
		if retained {
			// Killing cancels the job, whose retention keeps its checkpoints: the latest
			// one stays with the staging directory.
			kept, err := latestStagedCheckpoint(ctx, staging, appID)
			if err != nil {
				return fmt.Errorf("%s killed; its staging directory %s stays (finding the checkpoint %s keeps: %w)",
					appID, app.StagingDir, am.RetainOnCancellation, err)
			}
			if kept != "" {
				path := staging.URI() + "/" + kept
				fmt.Fprintf(out, "Killed %s; staging directory %s kept: it holds the job's latest checkpoint %s (%s; resume with --fromSavepoint %s)\n",
					appID, app.StagingDir, path, am.RetainOnCancellation, path)
				return nil
			}
			fmt.Fprintf(out, "%s killed before any checkpoint completed: none is kept (%s)\n", appID, am.RetainOnCancellation)
		}
		if err := removeStagingForGood(ctx, out, staging, appID, app.StagingDir); err != nil {
			return fmt.Errorf("%s killed, but its staging directory %s may stay: %w", appID, app.StagingDir, err)
		}
		fmt.Fprintf(out, "Killed %s; staging directory %s removed\n", appID, app.StagingDir)
		return nil
	}
	fmt.Fprintf(out, "Interrupted: %s keeps running (tide run --cancel-on-exit kills it on Ctrl-C).\n", appID)
	fmt.Fprintf(out, "Stop it with: tide cancel %s (its AM found through the ResourceManager; the job is %s)\n", appID, job)
	return nil
}

// killWait bounds killing an application on Ctrl-C with --cancel-on-exit.
const killWait = time.Minute

// awaitEnd waits until YARN reports app ended.
func awaitEnd(ctx context.Context, rm *yarn.ClientRM, app *yarnpb.ApplicationIdProto) error {
	for {
		r, err := rm.GetApplicationReport(ctx, app)
		if err != nil {
			return fmt.Errorf("waiting for the application to end: %w", err)
		}
		switch r.GetYarnApplicationState() {
		case yarnpb.YarnApplicationStateProto_KILLED, yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the application to end: still %v: %w", r.GetYarnApplicationState(), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// reportStaging says what became of the application's staging directory: the AM removes
// it after the application succeeded or was cancelled, unless the cancelled job's retention
// kept its latest checkpoint in it (retained, retainedInStaging, and a checkpoint had
// completed), and keeps it (with the checkpoints, unless state.checkpoints.dir points
// elsewhere) otherwise.
func reportStaging(ctx context.Context, out io.Writer, staging storage.Storage, appID, dir string, final yarnpb.FinalApplicationStatusProto, retained bool) {
	if final != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED && final != yarnpb.FinalApplicationStatusProto_APP_KILLED {
		fmt.Fprintf(out, "Staging directory %s kept (%v): it holds the shipped binary and configuration, and the checkpoints unless state.checkpoints.dir points elsewhere\n", dir, final)
		return
	}
	if retained && final == yarnpb.FinalApplicationStatusProto_APP_KILLED {
		if kept, err := latestStagedCheckpoint(ctx, staging, appID); err == nil && kept != "" {
			fmt.Fprintf(out, "Staging directory %s kept (%v): it holds the checkpoint the job keeps, %s\n", dir, final, staging.URI()+"/"+kept)
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, stagingRemovalWait)
	defer cancel()
	for {
		_, err := staging.Stat(ctx, appID)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			fmt.Fprintf(out, "Staging directory %s removed\n", dir)
			return
		case ctx.Err() != nil:
			fmt.Fprintf(out, "Staging directory %s is still there %s after the application ended (see the AM log)\n", dir, stagingRemovalWait)
			return
		case err != nil:
			slog.Warn("checking the staging directory", "dir", dir, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func mebibytes(m conf.MemorySize) int64 { return m.Bytes() >> 20 }

func hadoopUser() (string, error) {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("the Hadoop user (set HADOOP_USER_NAME): %w", err)
	}
	return u.Username, nil
}

// yarnAMEnv is the AM container's extra environment: the log level and, when no Hadoop
// configuration files are shipped, the client's default file system (so hdfs:///path
// resolves in containers without HADOOP_CONF_DIR; the AM hands it on to its TaskManagers).
func yarnAMEnv(logLevel string, confShipped bool) map[string]string {
	env := map[string]string{"TIDE_LOG_LEVEL": logLevel}
	if confShipped {
		return env
	}
	if fs, err := clientDefaultFS(); err == nil && fs != "" {
		env[storage.EnvDefaultFS] = fs
	} else if v := os.Getenv(storage.EnvDefaultFS); v != "" {
		env[storage.EnvDefaultFS] = v
	}
	return env
}

// clientDefaultFS is fs.defaultFS from $HADOOP_CONF_DIR/core-site.xml when it is hdfs://.
func clientDefaultFS() (string, error) {
	dir := os.Getenv("HADOOP_CONF_DIR")
	if dir == "" {
		return "", nil
	}
	f, err := os.Open(dir + "/core-site.xml")
	if err != nil {
		return "", err
	}
	defer f.Close()
	core, err := yarn.ParseSite(f)
	if err != nil {
		return "", fmt.Errorf("%s/core-site.xml: %w", dir, err)
	}
	if fs := strings.TrimRight(core["fs.defaultFS"], "/"); strings.HasPrefix(fs, "hdfs://") {
		return fs, nil
	}
	return "", nil
}

// stagingURI is yarn.staging-directory, else <fs.defaultFS>/user/<user>/.tide.
func stagingURI(cfg *conf.Config, usr string) (string, error) {
	if v, ok := cfg.Value(keyStagingDir); ok && v != "" {
		return strings.TrimRight(v, "/"), nil
	}
	dir := os.Getenv("HADOOP_CONF_DIR")
	if dir == "" {
		return "", fmt.Errorf("no staging directory: set %s or HADOOP_CONF_DIR (core-site.xml names fs.defaultFS)", keyStagingDir)
	}
	f, err := os.Open(dir + "/core-site.xml")
	if err != nil {
		return "", fmt.Errorf("the staging directory comes from fs.defaultFS: %w", err)
	}
	defer f.Close()
	core, err := yarn.ParseSite(f)
	if err != nil {
		return "", fmt.Errorf("%s/core-site.xml: %w", dir, err)
	}
	fs := strings.TrimRight(core["fs.defaultFS"], "/")
	if !strings.HasPrefix(fs, "hdfs://") {
		return "", fmt.Errorf("fs.defaultFS %q in %s/core-site.xml: expected hdfs://; set %s", fs, dir, keyStagingDir)
	}
	return fs + "/user/" + usr + "/.tide", nil
}

// shippedConfig is the flink-conf.yaml the containers get: every key set by the file or
// -D, plus a checkpoint directory under the application's staging directory when none is
// set (a YARN attempt recovers only from a file system every node sees).
func shippedConfig(cfg *conf.Config, stagingDir string) ([]byte, error) {
	m := map[string]string{}
	for _, k := range cfg.Keys() {
		if v, ok := cfg.Value(k); ok {
			m[k] = v
		}
	}
	// The internal secret goes in the containers' credentials (and a local file's path
	// means nothing on the NodeManagers): never into the staging directory.
	delete(m, conf.InternalSecret.Key())
	delete(m, conf.InternalSecretFile.Key())
	defaultFS, _ := clientDefaultFS()
	for _, k := range []string{conf.CheckpointsDir.Key(), conf.SavepointsDir.Key()} {
		if v := m[k]; v != "" {
			m[k] = qualifyHDFS(v, defaultFS)
		}
	}
	if dir := m[conf.CheckpointsDir.Key()]; dir == "" {
		m[conf.CheckpointsDir.Key()] = stagingCheckpoints(stagingDir)
	} else if !strings.HasPrefix(dir, "hdfs://") {
		slog.Warn("state.checkpoints.dir is not on HDFS: a second AM attempt on another node will not find the checkpoints", "dir", dir)
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rendering the configuration for YARN: %w", err)
	}
	return b, nil
}

// jobManagerOverrides binds the AM's RPC and REST servers to its NodeManager's host on
// free ports, unless the configuration says otherwise.
func jobManagerOverrides(cfg *conf.Config) []string {
	var out []string
	for _, kv := range [][2]string{
		{conf.JobManagerRPCAddress.Key(), "$NM_HOST"},
		{conf.JobManagerRPCPort.Key(), "0"},
		{conf.RestBindAddress.Key(), "$NM_HOST"},
		{conf.RestPort.Key(), "0"},
	} {
		if !cfg.IsSet(kv[0]) {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return out
}

// activeDriver builds the YARN driver when this AM runs in a YARN container (tide run
// put the scheduler address in its environment); otherwise nil (standalone). It also
// enables active worker requests in opts.
func activeDriver(cfg *conf.Config, opts *core.Options, rpc, rest net.Addr, secret clusterauth.Secret) (drivers.Driver, error) {
	if !yarn.InContainer() {
		return nil, nil
	}
	aw, err := am.ActiveWorkerOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts.ActiveWorkers = aw
	d, err := yarn.NewDriverFromConf(cfg, rpc, rest, yarnCredentials(secret), slog.Default())
	if err != nil {
		return nil, fmt.Errorf("the YARN driver: %w", err)
	}
	return d, nil
}

// checkOutputsForYarn refuses a job whose file sink writes to a relative local path: in a
// YARN container it would land in the working directory YARN deletes when the container ends,
// and the application would still succeed. (Unsupported schemes already failed the build.)
func checkOutputsForYarn(name string, job *stream.Job) error {
	for _, o := range job.Outputs() {
		if err := o.CheckForCluster("YARN"); err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
	}
	return nil
}
