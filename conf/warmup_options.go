package conf

import "time"

// ---- Warm-up and standby copies (issue 14, KIP-441) ---------------------------------------------

var (
	// WarmupTimeout turns warm-ups on and bounds them.
	WarmupTimeout = declare[time.Duration](Spec{
		Key: "state.warmup.timeout", Default: "0 s",
		Description: "A planned move of keyed state (scale-up, tide rescale, evacuation of a blocked node) first copies the key-group ranges that change TaskManager onto their new TaskManagers from the newest completed checkpoint while the job runs on, keeps them current with every newer checkpoint, and switches when they hold the newest one; after this long it switches without the copies that are not ready. 0 switches at once (Flink's behaviour).",
		Reloadable:  true,
	}, durationType{})

	// MaxWarmupReplicas bounds the warm-ups of one move.
	MaxWarmupReplicas = declare[int](Spec{
		Key: "max.warmup.replicas", Default: "2", Unit: "copies",
		Description: "Kafka Streams' key: the most key-group ranges of the job warmed up at once before a planned move (per job, the ranges that move the most key groups first); the other moving ranges are restored from the checkpoint storage at the switch.",
		Reloadable:  true,
	}, intType{0, unlimited})

	// NumStandbyReplicas keeps warm copies for failover.
	NumStandbyReplicas = declare[int](Spec{
		Key: "num.standby.replicas", Default: "0", Unit: "copies",
		Description: "Kafka Streams' key: warm copies of every key-group range kept on other TaskManagers (other nodes first, never a blocked one), following every completed checkpoint; when a TaskManager is lost, its ranges go preferably to where their copies are and restore from local disk.",
		Reloadable:  true,
	}, intType{0, unlimited})
)
