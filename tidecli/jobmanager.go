package tidecli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/storage"
)

func jobManagerCommand() *cli.Command {
	return &cli.Command{
		Name:      "jobmanager",
		Usage:     "run the AM of one job (standalone application mode)",
		ArgsUsage: "[-- job arguments...]",
		Description: `Starts the application master for the job named by --job-classname, serves
TaskManagers on jobmanager.rpc.address:jobmanager.rpc.port and the REST API on
rest.bind-address:rest.port (default 127.0.0.1:8081), and runs the job until it ends.
Arguments after "--" go to the job. Exits 0 when the job finishes or is cancelled.

` + dynamicHelp,
		Flags: jobStartFlags(
			&cli.StringFlag{Name: "job-id", Usage: "32 hex digits; default derives a stable id from the job name and arguments, so a restarted AM resumes from the job's checkpoints"},
			&cli.IntFlag{Name: rpcListenerFDFlag, Usage: "serve TaskManagers on this inherited listening socket (`FD`) instead of binding jobmanager.rpc.address/port (tide run --target local binds the AM's ports itself and passes them)"},
			&cli.IntFlag{Name: restListenerFDFlag, Usage: "serve the REST API on this inherited listening socket (`FD`) instead of binding rest.bind-address/rest.port"},
			&cli.StringSliceFlag{Name: "expect-taskmanagers", Usage: "resource ids of TaskManagers started together with the AM (tide run --target local passes them): the first deployment waits for them, at most the submission stabilization timeout"},
		),
		Action: runJobManager,
	}
}

// defaultJobID is a stable 32-hex-digit id for a job name and its arguments.
func defaultJobID(name string, args []string) string {
	h := sha256.Sum256([]byte(name + "\x00" + strings.Join(args, "\x00")))
	return hex.EncodeToString(h[:16])
}

func validJobID(id string) error {
	if len(id) != 32 {
		return fmt.Errorf("--job-id %q: expected 32 hex digits", id)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return fmt.Errorf("--job-id %q: expected 32 hex digits", id)
	}
	return nil
}

func runJobManager(c *cli.Context) error {
	cfg, name, args, job, err := loadJob(c)
	if err != nil {
		return err
	}
	jobID := c.String("job-id")
	if jobID == "" {
		jobID = defaultJobID(name, args)
	} else if err := validJobID(jobID); err != nil {
		return err
	}
	if conf.Scheduler.Get(cfg) != "Adaptive" {
		return fmt.Errorf("jobmanager.scheduler: %s: tide runs the Adaptive scheduler only", conf.Scheduler.Get(cfg))
	}

	secret, err := internalSecret(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	rpcAddr := net.JoinHostPort(conf.JobManagerRPCAddress.Get(cfg), strconv.Itoa(conf.JobManagerRPCPort.Get(cfg)))
	rpcLn, err := listen(ctx, c, rpcListenerFDFlag, rpcAddr)
	if err != nil {
		return fmt.Errorf("jobmanager.rpc.address/port %s: %w", rpcAddr, err)
	}
	restAddr := net.JoinHostPort(conf.RestBindAddress.Get(cfg), strconv.Itoa(conf.RestPort.Get(cfg)))
	restLn, err := listen(ctx, c, restListenerFDFlag, restAddr)
	if err != nil {
		rpcLn.Close()
		return fmt.Errorf("rest.bind-address/rest.port %s: %w", restAddr, err)
	}

	var st storage.Storage
	if dir, ok := conf.CheckpointsDir.Lookup(cfg); ok && dir != "" {
		if st, err = storage.Open(ctx, dir, storage.Options{}); err != nil {
			return fmt.Errorf("state.checkpoints.dir %s: %w", dir, err)
		}
		defer st.Close()
	}
	interval, _ := conf.CheckpointingInterval.Lookup(cfg)
	opts := am.SchedulerOptions(cfg)
	driver, err := activeDriver(cfg, &opts, rpcLn.Addr(), restLn.Addr(), secret)
	if err != nil {
		return err
	}
	var kam *kubeAM
	if driver == nil {
		if kam, err = kubeDriver(ctx, cfg, &opts, jobID, name, rpcLn.Addr(), restLn.Addr()); err != nil {
			return err
		}
		driver = kam.Driver()
	}
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("scheduler options: %w", err)
	}
	a, err := am.New(am.Config{
		JobID: jobID, JobName: name, JobArgs: args, Job: job,
		Options: opts, Conf: cfg.Map(),
		Storage: st, CheckpointInterval: interval,
		CheckpointTimeout:     conf.CheckpointingTimeout.Get(cfg),
		NumRetained:           conf.CheckpointsNumRetained.Get(cfg),
		CheckpointRetention:   conf.CheckpointsRetention.Get(cfg),
		FromSavepoint:         c.String(fromSavepointFlag),
		AllowNonRestoredState: c.Bool(allowNonRestoredStateFlag),
		HeartbeatInterval:     conf.HeartbeatInterval.Get(cfg),
		Driver:                driver,
		HandOffOnStop:         kam.handsOff(),
		ExpectedTaskManagers:  expectedTaskManagers(c.StringSlice("expect-taskmanagers")),
		Logger:                slog.Default(),
		RPCListener:           rpcLn,
		RESTListener:          restLn,
		RESTAuthToken:         conf.RestAuthToken.Get(cfg),
		RESTAuthTokenFile:     conf.RestAuthTokenFile.Get(cfg),
		RESTShutdownGrace:     conf.RestShutdownGracePeriod.Get(cfg),
		InternalSecret:        secret,
		Watch:                 am.ConfigWatch{Dir: conf.ResolveDir(c.String("configDir")), Dynamic: dynamicArgs(c), Initial: cfg},
	})
	if err != nil {
		return err
	}
	slog.Info("jobmanager ready", "job", name, "jobID", jobID, "rpc", a.RPCAddr(), "rest", "http://"+a.RESTAddr(),
		"reactive", opts.Reactive, "checkpoints", conf.CheckpointsDir.Get(cfg))
	res, err := a.Run(ctx)
	if err != nil {
		return err
	}
	kam.finish(res)
	switch res.Status {
	case core.StatusFinished, core.StatusCanceled, core.StatusSuspended:
		return nil
	}
	return errors.New("job " + name + " ended " + string(res.Status) + ": " + res.Cause)
}

// expectedTaskManagers turns --expect-taskmanagers values into ids, skipping empty ones.
func expectedTaskManagers(vals []string) []core.TaskManagerID {
	var out []core.TaskManagerID
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, core.TaskManagerID(v))
		}
	}
	return out
}
