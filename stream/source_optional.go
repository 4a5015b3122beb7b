package stream

import "context"

// ReaderCheckpointListener is implemented by source readers that act when a checkpoint they
// took part in completes (the Kafka reader commits the checkpointed offsets back to its
// consumer group, for monitoring). The runtime calls it from the reader's goroutine after the
// chain's operators completed the checkpoint; an error fails the subtask.
type ReaderCheckpointListener interface {
	NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error
}

// WatermarkReader is implemented by readers that generate watermarks themselves, per split
// (Flink's per-split watermark generation: the Kafka reader keeps one watermark per partition
// and leaves idle partitions out). The runtime emits ReaderWatermark instead of the watermark
// of the source's WatermarkStrategy; values that do not advance are ignored.
type WatermarkReader interface {
	ReaderWatermark() int64
}
