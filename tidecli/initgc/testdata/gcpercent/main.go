// Command gcpercent prints the GC percent in effect when main starts and after
// initgc.Done, for initgc's test.
package main

import (
	"fmt"
	"runtime/debug"

	"github.com/tidestream/tide/tidecli/initgc"
)

// percent reads the GC percent in effect (SetGCPercent returns the previous one).
func percent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func main() {
	before := percent()
	initgc.Done()
	fmt.Println(before, percent())
}
