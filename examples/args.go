package examples

import (
	"flag"
	"fmt"
	"io"
)

// jobArgs are the arguments every example understands.
type jobArgs struct {
	records     int64
	keys        int64
	rate        float64
	output      string
	input       string
	parallelism int
	maxParallel int
	cars        int
	dedup       bool
	ballast     int
	progress    string
	timestamps  string
}

func parseArgs(job string, args []string) (jobArgs, error) {
	a := jobArgs{}
	fs := flag.NewFlagSet(job, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int64Var(&a.records, "records", 0, "number of records (0: the job's default)")
	fs.Int64Var(&a.keys, "keys", 0, "number of keys (0: the job's default)")
	fs.Float64Var(&a.rate, "rate", 0, "records per second per source subtask (0: unlimited)")
	fs.StringVar(&a.output, "output", "", "output directory (exactly-once file sink); empty: print")
	fs.StringVar(&a.input, "input", "", "input directory: a path, file:///path or hdfs://namenode:port/path")
	fs.IntVar(&a.parallelism, "parallelism", 1, "configured parallelism")
	fs.IntVar(&a.maxParallel, "max-parallelism", 0, "maxParallelism (number of key groups; 0: default)")
	fs.IntVar(&a.cars, "cars", 2, "number of cars (TopSpeedWindowing)")
	fs.BoolVar(&a.dedup, "dedup", false, "drop numbers already seen per key, remembered in MapState (CheckableCount)")
	fs.IntVar(&a.ballast, "ballast", 0, "bytes of filler kept in keyed state per key (CheckableCount)")
	fs.StringVar(&a.progress, "progress", "", "file the --ballast step appends record times to (CheckableCount)")
	fs.StringVar(&a.timestamps, "timestamps", "", "CheckableCount: also write every 100th number with its sink's wall-clock time to this directory (exactly-once)")
	if err := fs.Parse(args); err != nil {
		return a, fmt.Errorf("job %s: %w", job, err)
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("job %s: unexpected argument %q", job, fs.Arg(0))
	}
	if a.parallelism < 1 {
		return a, fmt.Errorf("job %s: --parallelism %d, want >= 1", job, a.parallelism)
	}
	if a.ballast < 0 {
		return a, fmt.Errorf("job %s: --ballast %d, want >= 0", job, a.ballast)
	}
	if a.records < 0 || a.keys < 0 || a.rate < 0 {
		return a, fmt.Errorf("job %s: --records, --keys and --rate must not be negative", job)
	}
	return a, nil
}
