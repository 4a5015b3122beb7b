// Command tide is the stock tide binary: tidecli with the example jobs (TopSpeedWindowing,
// WordCount, CheckableCount). A user's own binary is the same three lines with their jobs.
package main

import (
	_ "github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/tidecli"
)

func main() { tidecli.Main() }
