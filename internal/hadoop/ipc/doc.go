// Package ipc is tide's client for Hadoop IPC (RPC version 9, protobuf engine), the protocol
// YARN's ResourceManager and NodeManagers and HDFS's NameNode speak. It knows nothing about YARN
// or HDFS itself: package yarn builds typed clients on top of it, and package storage calls the
// NameNode's lease recovery through it (which colinmarc/hdfs lacks).
//
// One Client talks one protocol to one server address over one TCP connection, dialled on
// first use and again after the connection is lost:
//
//	Client.Call ──► conn (one per TCP connection)
//	                 │ write: [len][RpcRequestHeader][RequestHeader][request]   (callId ≥ 0)
//	                 │ read loop: [len][RpcResponseHeader][response] ─► pending[callId]
//	                 ▼
//	handshake: "hrpc" 9 0 auth ─► SASL (TOKEN/DIGEST-MD5, callId -33) ─► context (callId -3)
//
// Calls are multiplexed: each gets its own call id and waits for the reply carrying it, so
// concurrent callers share the connection. A call waits at most until its context is done.
// Server-side Java exceptions come back as *RemoteError carrying the exception class.
//
// Authentication is SIMPLE (the user name goes in the connection context) or, when the
// client is given a token, SASL TOKEN with DIGEST-MD5, which YARN's ApplicationMaster and
// NodeManager ports demand even on clusters with security off.
package ipc
