package tidecli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// clientCategory groups the commands that talk to a running AM.
const clientCategory = "Client commands (talk to a running AM's REST API)"

// interleaveArgs lets client commands take flags after their arguments, as in
// "tide rescale JOB --vertex V --parallelism 2..4": urfave/cli stops at the first
// argument, so the flags of a client command are moved in front of its arguments.
// Other commands and everything after "--" are left alone.
func interleaveArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	i := 1
	// Global flags come before the command.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if takesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := findCommand(app.Commands, args[i])
	if cmd == nil || (cmd.Category != clientCategory && cmd.Category != yarnCategory) {
		return args
	}
	i++
	for len(cmd.Subcommands) > 0 && i < len(args) {
		sub := findCommand(cmd.Subcommands, args[i])
		if sub == nil {
			return args
		}
		cmd = sub
		i++
	}
	out := append([]string(nil), args[:i]...)
	var positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		out = append(out, a)
		if takesValue(cmd.Flags, a) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return append(out, positional...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the flag token arg ("-m", "--vertex", not "--json" or
// "--wait=1s") is followed by its value.
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}
