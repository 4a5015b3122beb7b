package kafka

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/tidestream/tide/stream"
)

// partitionSplit is one topic partition and the next offset to read from it.
type partitionSplit struct {
	Topic     string
	Partition int32
	Offset    int64
}

type topicPartition struct {
	Topic     string
	Partition int32
}

func (s partitionSplit) tp() topicPartition { return topicPartition{s.Topic, s.Partition} }

// splitID is "<topic>-<partition>", Kafka's own name for a partition.
func splitID(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

func (s partitionSplit) encode() stream.Split {
	b := stream.AppendString(nil, s.Topic)
	b = stream.Int64Codec{}.Append(b, int64(s.Partition))
	b = stream.Int64Codec{}.Append(b, s.Offset)
	return stream.Split{ID: splitID(s.Topic, s.Partition), Data: b}
}

func decodeSplit(sp stream.Split) (partitionSplit, error) {
	d := stream.NewDecoder(sp.Data)
	s := partitionSplit{Topic: d.String(), Partition: int32(d.Varint()), Offset: d.Varint()}
	if d.Err() != nil {
		return s, fmt.Errorf("decoding Kafka split %q: %w", sp.ID, d.Err())
	}
	if d.Remaining() != 0 {
		return s, fmt.Errorf("decoding Kafka split %q: %d trailing bytes", sp.ID, d.Remaining())
	}
	if s.Partition < 0 || s.Offset < 0 {
		return s, fmt.Errorf("decoding Kafka split %q: partition %d offset %d", sp.ID, s.Partition, s.Offset)
	}
	return s, nil
}

// owner is the reader a partition goes to: partition 0 of a topic to a reader derived from
// the topic's name, the following partitions round robin from there (as Flink's
// KafkaSourceEnumerator does), so partitions of one topic spread evenly.
func owner(tp topicPartition, parallelism int) int {
	h := fnv.New32a()
	h.Write([]byte(tp.Topic))
	start := int(h.Sum32()&0x7fffffff) % parallelism
	return (start + int(tp.Partition)) % parallelism
}
