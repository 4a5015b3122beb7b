package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Record is one Kafka record as a source's Deserialize sees it.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time
	Headers   map[string][]byte
}

func recordOf(r *kgo.Record) Record {
	rec := Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		rec.Headers = make(map[string][]byte, len(r.Headers))
		for _, h := range r.Headers {
			rec.Headers[h.Key] = h.Value
		}
	}
	return rec
}
