package worker

import (
	"fmt"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/rpc"
)

// jobBufferTimeout is the job's execution.buffer-timeout from the AM's configuration (nil when
// the AM sends none: the data plane's own, from the TaskManager's configuration, applies). A
// value the TaskManager cannot accept is an error naming the key.
func jobBufferTimeout(amConf map[string]string) (*time.Duration, error) {
	key := conf.ExecutionBufferTimeout.Key()
	raw, ok := amConf[key]
	if !ok {
		return nil, nil
	}
	c, err := conf.Defaults().With(key, raw)
	if err != nil {
		return nil, fmt.Errorf("the AM's configuration: %w", err)
	}
	d := conf.ExecutionBufferTimeout.Get(c)
	return &d, nil
}

// bufferTimeoutOf decodes a reloaded execution.buffer-timeout sent by the AM.
func bufferTimeoutOf(m *rpc.PerfBufferTimeout) time.Duration { return time.Duration(m.GetNanos()) }
