// Package tidecli is the whole tide binary as a library: the AM (jobmanager), the
// TaskManager (taskmanager), the launcher (run --target local|yarn-per-job) and the client
// commands. A program that registers its jobs and calls Main is a complete tide binary with
// those jobs in it; YARN submission ships that program as it ships the stock tide:
//
//	func main() {
//		stream.Register("FraudDetection", buildFraudDetection)
//		tidecli.Main()
//	}
package tidecli

import (
	"fmt"
	"os"

	"github.com/tidestream/tide/tidecli/initgc"
)

// Main runs the command line in os.Args and exits the process with tide's exit code
// (0 success, 1 failure, 2 usage error, 3 no AM reachable). It does not return.
func Main() {
	os.Exit(Run(os.Args))
}

// Run runs one tide command line (args[0] is the program name) and returns its exit code,
// printing a failure to stderr as "tide: <error>".
func Run(args []string) int {
	initgc.Done()
	app := newApp()
	if err := app.Run(interleaveArgs(app, normalizeArgs(args))); err != nil {
		fmt.Fprintf(os.Stderr, "tide: %s\n", errorText(err))
		return exitCode(err)
	}
	return exitOK
}
