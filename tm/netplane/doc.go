// Package netplane is the TaskManager data plane: framed TCP between
// TaskManagers with record batching and Flink-style credit-based flow control.
//
// Each TaskManager runs one Plane. A channel (ChannelID: attempt, edge,
// producer subtask, consumer subtask) has an Output on the producer's plane
// and an Input on the consumer's plane. All channels from plane A to plane B
// share one TCP connection, dialed by A; channels whose ends are on the same
// plane skip the network but keep the same batching and credits, and may carry
// records unencoded in a side car of each buffer (Output.WriteSides, side.go).
//
//	 producer plane A                               consumer plane B
//	┌───────────────────────┐  one TCP connection  ┌───────────────────────┐
//	│ Output ─ buffer ──────┼──OPEN/DATA/END/RESET─┼─► Input ─ queue ─ Next │
//	│ Output ─ buffer ──────┼──────────────────────┼─► Input ─ queue ─ Next │
//	│   ▲ credits           │◄──CREDIT/RESET───────┼── free buffers         │
//	└───┴───────────────────┘                      └───────────────────────┘
//
// Frames: type(1) stream(4) length(4) payload, big endian. HELLO (magic,
// version, listen address) is exchanged first, the dialer speaking first.
// OPEN binds a stream id, chosen by the dialer, to a ChannelID. DATA carries
// one buffer of records, each a uvarint length and the bytes. END is end of
// stream. CREDIT grants buffers. RESET aborts one channel with a reason.
//
// Flow control: an Input grants CreditsPerChannel credits, plus its share of
// its gate's FloatingBuffersPerGate (OpenGateInput), when its producer
// attaches (OPEN may arrive before OpenInput: the input is then created
// lazily, and a gate opened later grants its share on top) and one more each
// time the last record of a buffer is read. An Output sends a buffer only
// against a credit, so a consumer that stops reading holds at most its
// credits × BufferBytes and its producer's Write blocks once its own buffer
// is full. Buffers leave when full, on
// Flush, on Close, or FlushInterval after their first record (execution.buffer-timeout;
// FlushEveryRecord sends each record as soon as a credit allows). Output.SetBufferTimeout
// gives one output its own timeout (the job's), also while records wait.
//
// Failure: ReleaseAttempt fails every channel of an attempt on both ends
// (ErrReleased locally, ErrChannelReset at the peer). A broken connection
// fails its channels with ErrPeerLost naming the peer. Every blocking call
// takes a context. Channels that ended or failed stay known to the plane
// until ReleaseAttempt for their attempt or Close.
package netplane
