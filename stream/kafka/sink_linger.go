package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// maxLinger is the longest linger franz-go accepts; execution.buffer-timeout -1 (send only
// full batches) and longer timeouts linger this long, and every checkpoint's flush (and the
// end of input) still sends what waits.
const maxLinger = time.Minute

// lingerFor is the producer linger that honours execution.buffer-timeout d (Runtime.BufferTimeout):
// 0 sends every record at once, a positive d lets a partly filled batch wait at most d, and
// -1 sends batches when they are full (or flushed) only. Without it franz-go lingers 10 ms
// whatever the job asked for.
func lingerFor(d time.Duration) time.Duration {
	if d < 0 || d > maxLinger {
		return maxLinger
	}
	return d
}

// lingerOpt is the client option for buffer-timeout d (the sink's ClientOptions come after
// it, so a ProducerLinger the user set wins).
func lingerOpt(d time.Duration) kgo.Opt { return kgo.ProducerLinger(lingerFor(d)) }
