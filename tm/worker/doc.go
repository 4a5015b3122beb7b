// Package worker is the TaskManager process: it connects to the AM over gRPC (retrying
// with backoff), registers its slots, heartbeats, runs the subtasks the AM deploys
// through tm/exec, exchanges records with other TaskManagers through tm/netplane, and
// forwards task states, checkpoint acknowledgements and split requests to the AM.
//
//	         ┌──────────── Run ─────────────┐
//	SIGTERM ─►  connect ─► Register ─► serve ─── stream breaks ─► reconnect (bounded)
//	         │      ▲ backoff   │ Rejected → exit with the AM's reason
//	         │      └───────────┘ Disconnect → clean exit
//	         └──────────────────────────────┘
package worker
