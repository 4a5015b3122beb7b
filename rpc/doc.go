// Package rpc holds tide's AM <-> TaskManager protocol: tide.proto, the Go code protoc
// generates from it (regenerate with ./generate.sh, or make generate), and the build id
// that keeps TaskManagers of another build away from an AM.
//
//	TaskManager                                   AM
//	    │── Connect (one bidirectional stream) ────►│
//	    │── Register{id,node,slots,build,data} ────►│  build id differs → Rejected
//	    │◄─────────── Registered{job,args,config} ──│
//	    │── Heartbeat / TaskStateUpdate / ─────────►│
//	    │   CheckpointAck / SplitRequest            │
//	    │◄── DeployTasks / CancelTasks / ───────────│
//	    │    TriggerCheckpoint / SplitAssignment    │
//	    ╳  stream breaks ───────────────────────────► TaskManagerLost at once
package rpc
