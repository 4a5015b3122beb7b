package tidecli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/rpc"
)

const dynamicHelp = `Every command takes Flink's dynamic properties: -Dkey=value (or -D key=value), which
override flink-conf.yaml from --configDir (or $FLINK_CONF_DIR).`

func newApp() *cli.App {
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprintf(c.App.Writer, "tide %s (build %s)\n", rpc.Version, rpc.BuildID())
	}
	return &cli.App{
		Name:    "tide",
		Usage:   "elastic application master for stateful stream processing",
		Version: rpc.Version,
		Description: `tide runs one streaming job per application master (AM). TaskManagers join the AM,
the job runs at the parallelism their slots allow and, in reactive mode
(-Dexecution-mode=reactive), rescales whenever one joins or leaves.

` + dynamicHelp + `

Client commands find the AM at -m/--jobmanager host:port, else $TIDE_JOBMANAGER, else
rest.address:rest.port of flink-conf.yaml, else localhost:8081. JOB is a job id, a
unique prefix of one, or the job name. --json prints JSON for scripts.

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"TIDE_LOG_LEVEL"},
				Usage: "debug, info, warn or error"},
		},
		Before:       setupLogging,
		Action:       rootAction,
		OnUsageError: onUsageError,
		Commands: append([]*cli.Command{
			jobManagerCommand(),
			taskManagerCommand(),
			runCommand(),
			logsCommand(),
			listJobsCommand(),
		}, clientCommands()...),
		HideHelpCommand: true,
	}
}

func setupLogging(c *cli.Context) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return fmt.Errorf("--log-level %q: expected debug, info, warn or error", c.String("log-level"))
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	return nil
}

// configDirFlag and dynamicFlag are on every command.
func configDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "configDir", Aliases: []string{"c"}, EnvVars: []string{conf.EnvConfDir},
		Usage: "directory holding flink-conf.yaml"}
}

func dynamicFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "D", Usage: "dynamic property `key=value` overriding flink-conf.yaml (repeatable)"}
}

// dynamicArgs returns the -D properties of the command.
func dynamicArgs(c *cli.Context) []string {
	return c.StringSlice("D")
}

// loadConfig reads flink-conf.yaml and the -D overrides, logging every warning.
func loadConfig(c *cli.Context) (*conf.Config, error) {
	cfg, warnings, err := conf.Load(c.String("configDir"), dynamicArgs(c))
	for _, w := range warnings {
		slog.Warn("configuration", "warning", w.String())
	}
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// normalizeArgs rewrites Flink-style "-Dkey=value" into "-D key=value" so the flag
// parser sees one -D flag per property; "--" ends the rewriting.
func normalizeArgs(args []string) []string {
	out := make([]string, 0, len(args)+4)
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "-D") && len(a) > 2 && !strings.HasPrefix(a, "-D=") {
			out = append(out, "-D", a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}
