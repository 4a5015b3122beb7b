// Package clusterauth authenticates tide's internal connections with a shared secret: the
// TaskManagers' gRPC stream to the AM and the data plane between TaskManagers.
//
// The rule is the REST API's: a server that listens on a loopback address may run without a
// secret (only local users reach it); one that listens anywhere else refuses to start
// without one. When a secret is configured it is always used, on any address.
//
// The secret never crosses the network. A TaskManager proves it to the AM with
// HMAC-SHA256(secret, "tide-rpc-client" | time | nonce) in the stream's metadata; the AM
// checks the time window and refuses a nonce it has seen, then proves itself back with
// HMAC(secret, "tide-rpc-server" | nonce) in the response header. Data plane peers exchange
// nonces in their HELLO frames and each sends HMAC(secret, role | both nonces).
//
// Where the secret comes from (see Load): security.internal.secret-file (a file only its
// owner may read), security.internal.secret, $TIDE_INTERNAL_SECRET, or on YARN the
// container's credentials file, which tide run and the AM fill.
package clusterauth
