package blocklist

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxNodeIDLength is the longest node id accepted, in bytes: a DNS name (the host name on YARN
// and standalone) and a Kubernetes node name are at most 253 characters.
const MaxNodeIDLength = 253

// StatusRequestEntityTooLarge answers a request whose cause, merged cause or new entry would go
// over a configured bound (413).
const StatusRequestEntityTooLarge = 413

// Limits bound what the blocklist holds, so that no request can make the AM's memory, its log or
// GET /blocklist grow without end. Each field names the configuration key that sets it.
type Limits struct {
	// MaxCauseLength bounds the cause of one request, in bytes (blocklist.cause.max-length).
	MaxCauseLength int
	// MaxMergedCauseLength bounds a node's cause after merging, in bytes
	// (blocklist.cause.max-merged-length).
	MaxMergedCauseLength int
	// MaxNodes bounds the number of blocked nodes (blocklist.max-nodes).
	MaxNodes int
}

// Keys of the configuration options behind Limits; messages name them so an operator knows what
// to change.
const (
	KeyMaxCauseLength       = "blocklist.cause.max-length"
	KeyMaxMergedCauseLength = "blocklist.cause.max-merged-length"
	KeyMaxNodes             = "blocklist.max-nodes"
)

// DefaultLimits are the bounds when nothing is configured.
func DefaultLimits() Limits {
	return Limits{MaxCauseLength: 1024, MaxMergedCauseLength: 4096, MaxNodes: 1000}
}

// withDefaults fills fields that are zero or negative with DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxCauseLength <= 0 {
		l.MaxCauseLength = d.MaxCauseLength
	}
	if l.MaxMergedCauseLength <= 0 {
		l.MaxMergedCauseLength = d.MaxMergedCauseLength
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = d.MaxNodes
	}
	return l
}

// ValidateNodeID checks that id can name a node: non-empty, valid UTF-8, at most
// MaxNodeIDLength bytes, printable, without white space or '/'. An id made of bytes that are
// not UTF-8 (a path segment "%FF%FE") is refused rather than stored, since it would be listed
// as U+FFFD and could never be named again to unblock it.
func ValidateNodeID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("node id is empty")
	case !utf8.ValidString(id):
		return fmt.Errorf("node id %s is not valid UTF-8 (a host or node name is expected)", Quote(id, 64))
	case len(id) > MaxNodeIDLength:
		return fmt.Errorf("node id %s is %d bytes long; at most %d are allowed", Quote(id, 64), len(id), MaxNodeIDLength)
	}
	for _, r := range id {
		if r == '/' || unicode.IsSpace(r) {
			return fmt.Errorf("node id %s contains '/' or white space", Quote(id, 64))
		}
		if !unicode.IsPrint(r) {
			return fmt.Errorf("node id %s contains the non-printable character %U", Quote(id, 64), r)
		}
	}
	return nil
}

// Quote returns s quoted with Go escapes (control and invalid bytes escaped), cut to at most
// max bytes of s with the full length noted, for error messages and logs.
func Quote(s string, max int) string {
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// LimitError is a request that would go over one of the Limits; the REST layer answers
// StatusRequestEntityTooLarge with its message.
type LimitError struct {
	Node NodeID
	// Key is the configuration key of the bound.
	Key     string
	Message string
}

func (e *LimitError) Error() string { return e.Message + " (" + e.Key + ")" }

// CheckAdd decides whether blocking n may go ahead under lim, given the node's current record
// (exists false when it is not blocked) and the number of blocked nodes. A new node over
// MaxNodes, or a merge whose cause would be longer than MaxMergedCauseLength, returns a
// *LimitError; nothing is changed.
func CheckAdd(old BlockedNode, exists bool, blocked int, n BlockedNode, lim Limits) error {
	lim = lim.withDefaults()
	if len(n.Cause) > lim.MaxCauseLength {
		return &LimitError{Node: n.ID, Key: KeyMaxCauseLength, Message: fmt.Sprintf(
			"the cause for node %s is %d bytes; at most %d are allowed", Quote(n.ID, 64), len(n.Cause), lim.MaxCauseLength)}
	}
	if !exists {
		if blocked >= lim.MaxNodes {
			return &LimitError{Node: n.ID, Key: KeyMaxNodes, Message: fmt.Sprintf(
				"the blocklist already holds %d nodes, the most allowed; unblock a node before blocking %s", blocked, Quote(n.ID, 64))}
		}
		return nil
	}
	if merged := mergeCauses(old.Cause, n.Cause); len(merged) > lim.MaxMergedCauseLength {
		return &LimitError{Node: n.ID, Key: KeyMaxMergedCauseLength, Message: fmt.Sprintf(
			"merging into node %s would make its cause %d bytes; at most %d are allowed: unblock the node and block it again with one cause, or merge repeating one of its causes",
			Quote(n.ID, 64), len(merged), lim.MaxMergedCauseLength)}
	}
	return nil
}

// CauseSummary describes a cause for a log line without repeating it whole: its first bytes,
// quoted, and its length.
func CauseSummary(cause string) string {
	return Quote(cause, 120)
}
