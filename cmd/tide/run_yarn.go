package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/yarn"
	"github.com/tidestream/tide/yarn/security"
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
		&cli.BoolFlag{Name: "detached", Aliases: []string{"d"}, Usage: "yarn-per-job: return once the job is RUNNING instead of following it to the end"},
		&cli.StringFlag{Name: "binary", Usage: "yarn-per-job: the tide binary to ship (default: this one)"},
	}
}

// runYarnPerJob submits the job as its own YARN application and follows it.
func runYarnPerJob(c *cli.Context) error {
	t0 := time.Now()
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	name, args := c.String("job-classname"), c.Args().Slice()
	if _, err := buildJob(name, args); err != nil {
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
	staging, err := storage.Open(ctx, stagingRoot, storage.Options{User: usr})
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
	sub := yarn.Submission{
		RM: rm, Staging: staging, Binary: binary,
		Config:            func(dir string) ([]byte, error) { return shippedConfig(cfg, dir) },
		JobName:           name,
		JobArgs:           args,
		JobManagerDynamic: jobManagerOverrides(cfg),
		AppName:           appName,
		Queue:             conf.YarnApplicationQueue.Get(cfg),
		Attempts:          conf.YarnApplicationAttempts.Get(cfg),
		AMMemoryMB:        mebibytes(conf.JobManagerMemoryProcessSize.Get(cfg)),
		AMVCores:          int32(conf.YarnAppMasterVcores.Get(cfg)),
		TMMemoryMB:        mebibytes(conf.TaskManagerMemoryProcessSize.Get(cfg)),
		TMVCores:          int32(tmVCores),
		RMAddress:         rmAddr, SchedulerAddress: schedAddr, User: usr,
		Env:    map[string]string{"TIDE_LOG_LEVEL": c.String("log-level")},
		Logger: slog.Default(),
	}
	if sitePath != "" {
		slog.Info("YARN configuration", "file", sitePath, "resourcemanager", rmAddr, "scheduler", schedAddr)
	}
	app, err := yarn.Submit(ctx, sub)
	if err != nil {
		return err
	}
	appID := yarn.ApplicationIDString(app.ID)
	fmt.Fprintf(out, "Submitted application %s (staging %s) in %s\n", appID, app.StagingDir, time.Since(t0).Round(time.Millisecond))
	var runningAt time.Duration
	p, err := yarn.Follow(ctx, rm, app.ID, yarn.FollowOptions{
		UntilRunning: c.Bool("detached"),
		OnChange: func(p yarn.Progress) {
			switch {
			case p.JobState != "":
				fmt.Fprintf(out, "%s: job %s (application %v)\n", appID, p.JobState, p.State)
				if p.JobState == "RUNNING" && runningAt == 0 {
					runningAt = time.Since(t0)
					fmt.Fprintf(out, "Job RUNNING %s after tide run; tracking URL %s\n", runningAt.Round(time.Millisecond), p.TrackingURL)
				}
			case p.TrackingURL != "":
				fmt.Fprintf(out, "%s: %v, tracking URL %s\n", appID, p.State, p.TrackingURL)
			default:
				fmt.Fprintf(out, "%s: %v\n", appID, p.State)
			}
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(out, "stopped following %s; the application goes on (kill it with yarn application -kill %s)\n", appID, appID)
			return nil
		}
		return err
	}
	if c.Bool("detached") {
		fmt.Fprintf(out, "Detached: %s runs at %s\n", appID, p.TrackingURL)
		return nil
	}
	fmt.Fprintf(out, "%s finished: %v\n", appID, p.Report.GetFinalApplicationStatus())
	return nil
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
	if dir := m[conf.CheckpointsDir.Key()]; dir == "" {
		m[conf.CheckpointsDir.Key()] = stagingDir + "/checkpoints"
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
func activeDriver(cfg *conf.Config, opts *core.Options, rpc, rest net.Addr) (drivers.Driver, error) {
	sched := os.Getenv(yarn.EnvSchedulerAddress)
	if sched == "" {
		return nil, nil
	}
	aw, err := am.ActiveWorkerOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts.ActiveWorkers = aw
	d, err := newYarnDriver(cfg, sched, rpc, rest)
	if err != nil {
		return nil, fmt.Errorf("the YARN driver: %w", err)
	}
	return d, nil
}

func newYarnDriver(cfg *conf.Config, sched string, rpc, rest net.Addr) (*yarn.Driver, error) {
	log := slog.Default()
	creds, err := security.LoadCredentialsFromEnv()
	if err != nil {
		return nil, err
	}
	tok, err := creds.AMRMToken()
	if err != nil {
		return nil, err
	}
	res, err := yarn.DecodeResources(os.Getenv(yarn.EnvResources))
	if err != nil {
		return nil, err
	}
	heartbeat, err := am.DurationKey(cfg, am.KeyYarnHeartbeat, 5*time.Second)
	if err != nil {
		return nil, err
	}
	fast, err := am.DurationKey(cfg, am.KeyYarnFastHeartbeat, 500*time.Millisecond)
	if err != nil {
		return nil, err
	}
	format, _ := cfg.Value(am.KeyYarnNodeIDFormat)
	nodeIDs, err := yarn.ParseNodeIDFormat(format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", am.KeyYarnNodeIDFormat, err)
	}
	usr := os.Getenv(yarn.EnvUser)
	rpcHost, rpcPortStr, err := net.SplitHostPort(rpc.String())
	if err != nil {
		return nil, fmt.Errorf("the AM's RPC address %s: %w", rpc, err)
	}
	rpcPort, _ := strconv.Atoi(rpcPortStr)
	slots := conf.TaskManagerNumberOfTaskSlots.Get(cfg)
	vcores := conf.YarnContainersVcores.Get(cfg)
	if vcores <= 0 {
		vcores = slots
	}
	tokens := yarn.NewNMTokenCache()
	amrm, err := yarn.DialAMRM(sched, tok, tokens, log)
	if err != nil {
		return nil, err
	}
	var nodes yarn.NodeLister
	if rmAddr := os.Getenv(yarn.EnvRMAddress); rmAddr != "" {
		rm, err := yarn.DialClientRM(rmAddr, usr, log)
		if err != nil {
			amrm.Close()
			return nil, err
		}
		nodes = yarn.ClusterNodes{RM: rm}
	}
	launch := yarn.TaskManagerLaunch{
		Resources: res, AMHost: rpcHost, AMPort: rpcPort,
		Env: map[string]string{"HADOOP_USER_NAME": usr, "TIDE_LOG_LEVEL": os.Getenv("TIDE_LOG_LEVEL")},
	}
	d, err := yarn.NewDriver(yarn.DriverConfig{
		Scheduler: amrm, Containers: yarn.NewNM(tokens, log), Nodes: nodes,
		Host: rpcHost, RPCPort: rpcPort, TrackingURL: "http://" + rest.String(),
		MemoryMB: mebibytes(conf.TaskManagerMemoryProcessSize.Get(cfg)), VCores: int32(vcores),
		Launch: launch.Context, NodeIDs: nodeIDs,
		Heartbeat: heartbeat, FastHeartbeat: fast,
		Logger: log,
	})
	if err != nil {
		amrm.Close()
		if c, ok := nodes.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	if self, err := yarn.ParseContainerID(os.Getenv("CONTAINER_ID")); err == nil {
		d.SetAttempt(strconv.Itoa(int(self.GetAppAttemptId().GetAttemptId())))
		slog.Info("YARN AM attempt", "attempt", yarn.AttemptIDString(self.GetAppAttemptId()), "container", os.Getenv("CONTAINER_ID"))
	}
	return d, nil
}
