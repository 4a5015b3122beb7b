package tidecli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
)

// Environment variables of the client commands.
const (
	envJobManager = "TIDE_JOBMANAGER"
	envRESTToken  = "TIDE_REST_TOKEN"
)

const defaultJobManager = api.DefaultAddress

// clientFlags are on every command that talks to an AM.
func clientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "jobmanager", Aliases: []string{"m"}, EnvVars: []string{envJobManager},
			Usage: "REST address of the AM, `host:port`, yarn-application:<application id> (its current AM, found through the ResourceManager), or kubernetes:[<namespace>/]<cluster-id> (its current AM, found through the API server; also -Dkubernetes.cluster-id=<cluster-id>) (default: rest.address:rest.port of flink-conf.yaml in --configDir, else " + defaultJobManager + ")"},
		&cli.StringFlag{Name: "token", EnvVars: []string{envRESTToken},
			Usage: "bearer token for an AM bound off loopback (default: rest.auth.token or rest.auth.token-file of flink-conf.yaml)"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts instead of tables"},
		configDirFlag(), dynamicFlag(),
	}
}

// clientCommand is the shared setup of a client command: its REST client and output.
type clientCommand struct {
	api  *api.Client
	out  io.Writer
	json bool
}

func newClientCommand(c *cli.Context) (*clientCommand, error) {
	addr, token := c.String("jobmanager"), c.String("token")
	if addr == "" || token == "" {
		cAddr, cToken := addressFromConfig(c)
		if addr == "" {
			addr = cAddr
		}
		if token == "" {
			token = cToken
		}
	}
	if app := yarnApplicationOf(c, addr); app != "" {
		var err error
		if addr, err = resolveYarnAM(c, app); err != nil {
			return nil, err
		}
	}
	if k, err := kubeClusterOf(c, addr); err != nil {
		return nil, err
	} else if k != nil {
		a, tok, err := k.resolve(c.Context)
		if err != nil {
			return nil, err
		}
		addr = a
		if !c.IsSet("token") {
			token = tok
		}
	}
	client, err := api.NewClient(api.Config{Address: addr, Token: token})
	if err != nil {
		return nil, usagef("-m/--jobmanager: %v", err)
	}
	return &clientCommand{api: client, out: c.App.Writer, json: c.Bool("json")}, nil
}

// addressFromConfig reads rest.address, rest.port and the token from the configuration, the
// way Flink's client finds its cluster; without a configuration directory it returns the
// default address. A configuration that does not load is reported and ignored.
func addressFromConfig(c *cli.Context) (addr, token string) {
	dir := conf.ResolveDir(c.String("configDir"))
	if dir == "" && len(dynamicArgs(c)) == 0 {
		return defaultJobManager, ""
	}
	cfg, _, err := conf.Load(dir, dynamicArgs(c))
	if err != nil {
		slog.Warn("configuration not usable for the AM address; using the default", "default", defaultJobManager, "err", err)
		return defaultJobManager, ""
	}
	host := conf.RestAddress.Get(cfg)
	if host == "" {
		host = "localhost"
	}
	addr = net.JoinHostPort(host, strconv.Itoa(conf.RestPort.Get(cfg)))
	token = conf.RestAuthToken.Get(cfg)
	if file := conf.RestAuthTokenFile.Get(cfg); token == "" && file != "" {
		if b, err := os.ReadFile(file); err == nil {
			token = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
		} else {
			slog.Warn("rest.auth.token-file not readable; sending no token", "file", file, "err", err)
		}
	}
	return addr, token
}

// printJSON writes v indented, for --json. encoding/json escapes C0 controls but not DEL, C1
// controls or bidi overrides; those are escaped too (\u00XX inside strings, still valid
// JSON), so piping --json to a terminal is as safe as the tables.
func (cc *clientCommand) printJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	out := buf.String()
	if needsEscape(strings.ReplaceAll(out, "\n", "")) {
		var b strings.Builder
		for _, r := range out {
			if r == 0x7f || unsafeRune(r) {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
		out = b.String()
	}
	if _, err := io.WriteString(cc.out, out); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// progress prints a line for people; --json output stays pure JSON. String arguments are
// escaped (termSafe): they mostly come from the AM.
func (cc *clientCommand) progress(format string, args ...any) {
	if !cc.json {
		cc.printf(format+"\n", args...)
	}
}

// printf writes to the command's output with string arguments escaped (termSafe).
func (cc *clientCommand) printf(format string, args ...any) {
	fmt.Fprintf(cc.out, format, termSafeArgs(args)...)
}

// jobArg is the command's one JOB argument.
func jobArg(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		return "", usagef("%s needs JOB (a job id, a unique prefix of one, or the job name; see tide list)", c.Command.FullName())
	case 1:
		return c.Args().First(), nil
	}
	return "", usagef("%s takes one JOB, got %d arguments: %q", c.Command.FullName(), c.NArg(), c.Args().Slice())
}

// noArgs refuses stray arguments.
func noArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("%s takes no arguments, got %q", c.Command.FullName(), c.Args().Slice())
	}
	return nil
}

// onUsageError turns flag parsing errors into usage errors (exit 2).
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return &usageError{msg: err.Error()}
}
