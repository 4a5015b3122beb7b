package tidecli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/stream"
)

// jobStartFlags are the flags of the commands that start a job (tide jobmanager, tide
// run): the configuration, --job-classname, the command's own flags, and the savepoint
// to start from.
func jobStartFlags(own ...cli.Flag) []cli.Flag {
	flags := []cli.Flag{
		configDirFlag(), dynamicFlag(),
		&cli.StringFlag{Name: "job-classname", Aliases: []string{"j"}, Required: true,
			Usage: "registered name of the job to run (see tide list-jobs)"},
	}
	flags = append(flags, own...)
	return append(flags, savepointRestoreFlags()...)
}

// loadJob loads the configuration and builds the job --job-classname names with the
// command's arguments, so that a bad job or bad job arguments fail before anything starts.
func loadJob(c *cli.Context) (cfg *conf.Config, name string, args []string, job *stream.Job, err error) {
	if cfg, err = loadConfig(c); err != nil {
		return nil, "", nil, nil, err
	}
	name, args = c.String("job-classname"), c.Args().Slice()
	if job, err = buildJob(name, args, conf.PipelineOperatorChaining.Get(cfg)); err != nil {
		return nil, "", nil, nil, err
	}
	var sub stream.Submission
	if dir, ok := conf.CheckpointsDir.Lookup(cfg); ok && dir != "" {
		sub.CheckpointInterval, _ = conf.CheckpointingInterval.Lookup(cfg)
	}
	if err = job.CheckSubmission(sub); err != nil {
		return nil, "", nil, nil, fmt.Errorf("job %s not submitted: %w", name, err)
	}
	return cfg, name, args, job, nil
}

// Flags of the commands that start a job from a savepoint (Flink's -s and -n).
const (
	fromSavepointFlag         = "fromSavepoint"
	allowNonRestoredStateFlag = "allowNonRestoredState"
)

func savepointRestoreFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: fromSavepointFlag, Aliases: []string{"s"},
			Usage: "start the job from this savepoint directory (hdfs://…, file://… or an absolute path), unless state.checkpoints.dir already holds a checkpoint of the job"},
		// No -n alias: tide run uses -n for --taskmanagers.
		&cli.BoolFlag{Name: allowNonRestoredStateFlag,
			Usage: "with --fromSavepoint: drop the savepoint's state of vertices the job no longer has instead of refusing to start"},
	}
}

// buildJob looks the job up in the registry and builds it, its operators chained unless
// chaining is false (pipeline.operator-chaining).
func buildJob(name string, args []string, chaining bool) (*stream.Job, error) {
	build, ok := stream.Lookup(name)
	if !ok {
		known := stream.Names()
		sort.Strings(known)
		return nil, fmt.Errorf("unknown job %q: this binary has %s", name, strings.Join(known, ", "))
	}
	job, err := build(args)
	if err == nil {
		if !chaining {
			job.DisableChaining()
		}
		_, err = job.Vertices() // errors recorded while the job was built (a sink's output)
	}
	if err != nil {
		return nil, fmt.Errorf("job %s with arguments %q: %w", name, args, err)
	}
	return job, nil
}
