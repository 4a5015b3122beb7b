// Package rest is the AM's REST API: Flink's paths and JSON field names over a Backend
// that the AM implements. It owns the HTTP side (routing, 404/405 in Flink's error shape,
// the bearer-token check, body limits and strict decoding, request validation) and
// answers with the types of package api, the same ones the Go client and the CLI use.
//
//	HTTP ──► rest (route, auth, decode) ──► Backend (am.AM: event loop, coordinators)
//	     ◄── api types as JSON ◄────────────┘
package rest
