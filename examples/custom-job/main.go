// Command frauddetection is a complete tide binary with one job of its own: the AM, the
// TaskManager, tide run (local and YARN) and the client commands all come from tidecli;
// the only code here is the job. It lives outside tide's module (see go.mod) the way a
// user's job does.
package main

import (
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tidecli"
)

func main() {
	stream.Register(FraudDetectionName, BuildFraudDetection)
	tidecli.Main()
}
