// Package kafka reads from and writes to Apache Kafka (github.com/twmb/franz-go).
//
// FromKafka is a FLIP-27 source: its enumerator runs in the AM, discovers the topics (a list
// or a regular expression) and their partitions at start and then periodically, and assigns
// each partition as one split, with a concrete starting offset (earliest, latest, a consumer
// group's committed offsets, or the first offset at a timestamp; partitions found later start
// at their earliest offset). Readers in the TaskManagers fetch their partitions without
// joining a group, emit records with their Kafka timestamps, keep one watermark per
// partition (idle partitions do not hold it back), and store each partition's next offset in
// checkpoints. When a checkpoint completes, its offsets are committed to the consumer group,
// for monitoring only; recovery uses the checkpoint.
//
// ToKafka is a sink with a DeliveryGuarantee: None, AtLeastOnce (flush on every checkpoint)
// or ExactlyOnce (two-phase commit: one Kafka transaction per subtask and checkpoint, flushed
// at the barrier, committed when the checkpoint completes, re-committed after a restore,
// transactional ids <prefix>-<subtask>-<n> that fence zombies and whose leftovers are
// aborted on restore). The producer lingers as execution.buffer-timeout says (0: every record
// at once, -1: full batches only, at most a minute), also after a live reload of it.
package kafka
