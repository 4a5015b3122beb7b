// Command tide is tide's one binary: the AM (jobmanager), the TaskManager
// (taskmanager), the local launcher (run --target local) and the client commands.
package main

import (
	"fmt"
	"os"
)

func main() {
	app := newApp()
	if err := app.Run(interleaveArgs(app, normalizeArgs(os.Args))); err != nil {
		fmt.Fprintf(os.Stderr, "tide: %s\n", err)
		os.Exit(exitCode(err))
	}
}
