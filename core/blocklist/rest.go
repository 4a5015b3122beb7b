package blocklist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HTTP status codes of the blocklist REST API (seed 003), declared here so that the
// core need not import net/http.
const (
	StatusOK         = 200
	StatusCreated    = 201
	StatusAccepted   = 202
	StatusBadRequest = 400
	StatusNotFound   = 404
	StatusConflict   = 409
)

// PermanentEndTimestamp is the endTimestamp of a blocking that never expires
// (Java's Long.MAX_VALUE, as in the seed).
const PermanentEndTimestamp int64 = math.MaxInt64

var (
	// ErrConflict: the node is already blocked and the request did not allow a merge (409).
	ErrConflict = errors.New("node is already blocked")
	// ErrNotFound: the node to unblock is not blocked (404).
	ErrNotFound = errors.New("node is not blocked")
)

// NodeInfo is one entry of the GET /blocklist response body, which maps node ids to
// their NodeInfo. Timestamps are unix milliseconds written as JSON strings, as in the seed.
type NodeInfo struct {
	Action         Action   `json:"action"`
	StartTimestamp int64    `json:"startTimestamp,string"`
	EndTimestamp   int64    `json:"endTimestamp,string"`
	Cause          string   `json:"cause"`
	TaskManagers   []string `json:"taskManagers"`
}

// NewNodeInfo describes n for REST; taskManagers are the TaskManagers on the node.
func NewNodeInfo(n BlockedNode, taskManagers []string) NodeInfo {
	end := PermanentEndTimestamp
	if !n.End.IsZero() {
		end = n.End.UnixMilli()
	}
	tms := slices.Clone(taskManagers)
	if tms == nil {
		tms = []string{}
	}
	slices.Sort(tms)
	return NodeInfo{Action: n.Action, StartTimestamp: n.Start.UnixMilli(), EndTimestamp: end, Cause: n.Cause, TaskManagers: tms}
}

// NewListResponse builds the GET /blocklist body; taskManagers may be nil.
func NewListResponse(nodes []BlockedNode, taskManagers func(NodeID) []string) map[NodeID]NodeInfo {
	out := make(map[NodeID]NodeInfo, len(nodes))
	for _, n := range nodes {
		var tms []string
		if taskManagers != nil {
			tms = taskManagers(n.ID)
		}
		out[n.ID] = NewNodeInfo(n, tms)
	}
	return out
}

// AddRequestBody is the body of PUT /blocklist/nodes/<id>, as a client writes it.
// EndTimestamp 0 (omitted) means the blocking is permanent.
type AddRequestBody struct {
	Action       Action `json:"action"`
	EndTimestamp int64  `json:"endTimestamp,omitempty,string"`
	Cause        string `json:"cause"`
	AllowMerge   bool   `json:"allowMerge,omitempty,string"`
}

// ErrorResponse is the body of a failed request (Flink's REST error shape).
type ErrorResponse struct {
	Errors []string `json:"errors"`
}

// RequestError lists every problem found in one request; the REST layer answers
// StatusBadRequest (StatusRequestEntityTooLarge when TooLarge) with
// ErrorResponse{Errors: Problems}.
type RequestError struct {
	Node     NodeID
	Problems []string
	// TooLarge: every problem is a value over a configured bound (413, not 400).
	TooLarge bool
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("invalid blocklist request for node %s: %s", Quote(e.Node, 64), strings.Join(e.Problems, "; "))
}

// Status is the HTTP status code to answer the request with.
func (e *RequestError) Status() int {
	if e.TooLarge {
		return StatusRequestEntityTooLarge
	}
	return StatusBadRequest
}

// AddRequest is a validated PUT /blocklist/nodes/<id> request.
type AddRequest struct {
	Node       BlockedNode
	AllowMerge bool
}

// ParseOptions are the AM's settings that shape how a request is read.
type ParseOptions struct {
	// DefaultAction is the action of a body without one (blocklist.default-action); empty makes
	// "action" required.
	DefaultAction Action
	// Limits bound the cause (zero fields: DefaultLimits).
	Limits Limits
}

var addFields = []string{"action", "endTimestamp", "cause", "allowMerge"}

// ParseAddRequest validates the id from the path and the JSON body of PUT
// /blocklist/nodes/<id> received at now. It accepts endTimestamp as a JSON number or a
// string of digits (unix milliseconds; Long.MAX_VALUE means permanent, as the seed says); an
// omitted endTimestamp leaves Node.EndUnset set, so the scheduler applies
// blocklist.default-timeout (0: permanent). A body without "action" takes opts.DefaultAction.
// allowMerge is a boolean or "true"/"false". Every problem is reported at once in a
// *RequestError. The node's Start is now.
func ParseAddRequest(id string, body []byte, now time.Time, opts ParseOptions) (AddRequest, error) {
	lim := opts.Limits.withDefaults()
	var problems []string
	tooLarge := 0
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if err := ValidateNodeID(id); err != nil {
		add("%v", err)
	}
	req := AddRequest{Node: BlockedNode{ID: id, Start: now}}
	fields := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 {
		if err := json.Unmarshal(trimmed, &fields); err != nil {
			add("request body is not a JSON object: %v", err)
			return req, &RequestError{Node: id, Problems: problems}
		}
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(addFields, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		add("unknown field %s: expected one of %s", Quote(k, 40), strings.Join(addFields, ", "))
	}

	if raw, ok := fields["action"]; !ok || isNull(raw) {
		if opts.DefaultAction.Valid() {
			req.Node.Action = opts.DefaultAction
		} else {
			add("field \"action\" is required: expected %s or %s", MarkBlocked, MarkBlockedAndEvacuate)
		}
	} else if s, err := jsonString(raw); err != nil {
		add("field \"action\": %v", err)
	} else if a, err := ParseAction(s); err != nil {
		add("field \"action\": %v", err)
	} else {
		req.Node.Action = a
	}

	if raw, ok := fields["cause"]; !ok || isNull(raw) {
		add("field \"cause\" is required")
	} else if s, err := jsonString(raw); err != nil {
		add("field \"cause\": %v", err)
	} else if mergeCauses(s, "") == "" {
		add("field \"cause\" is empty (or only commas and white space)")
	} else if len(s) > lim.MaxCauseLength {
		add("field \"cause\" is %d bytes; at most %d are allowed (%s)", len(s), lim.MaxCauseLength, KeyMaxCauseLength)
		tooLarge++
	} else {
		req.Node.Cause = mergeCauses(s, "")
	}

	req.Node.EndUnset = true
	if raw, ok := fields["endTimestamp"]; ok && !isNull(raw) {
		ms, err := jsonInt64(raw)
		switch {
		case err != nil:
			add("field \"endTimestamp\": %v", err)
		case ms == PermanentEndTimestamp:
			// Explicitly permanent (seed 003): End stays zero and no default timeout applies.
			req.Node.EndUnset = false
		case ms <= 0:
			add("field \"endTimestamp\" %d: expected unix milliseconds > 0", ms)
		case ms <= now.UnixMilli():
			add("field \"endTimestamp\" %d is not after now (%d): the blocking would already be over", ms, now.UnixMilli())
		default:
			req.Node.End = time.UnixMilli(ms)
			req.Node.EndUnset = false
		}
	}

	if raw, ok := fields["allowMerge"]; ok && !isNull(raw) {
		b, err := jsonBool(raw)
		if err != nil {
			add("field \"allowMerge\": %v", err)
		}
		req.AllowMerge = b
	}
	if len(problems) > 0 {
		return req, &RequestError{Node: id, Problems: problems, TooLarge: tooLarge == len(problems)}
	}
	return req, nil
}

// AddStatus decides an add request: whether to apply it and the status code to answer.
// A new node: 201. A blocked node with allowMerge: 202 (merged). Without: 409, not applied.
func AddStatus(alreadyBlocked, allowMerge bool) (status int, apply bool) {
	switch {
	case !alreadyBlocked:
		return StatusCreated, true
	case allowMerge:
		return StatusAccepted, true
	default:
		return StatusConflict, false
	}
}

// ApplyAdd carries out a validated add request on t at now and returns the status code
// and the node's resulting record. A conflict returns StatusConflict and ErrConflict.
func (t *Tracker) ApplyAdd(now time.Time, req AddRequest) (int, BlockedNode, error) {
	old, exists := t.Get(req.Node.ID)
	status, apply := AddStatus(exists, req.AllowMerge)
	if !apply {
		return status, old, fmt.Errorf("block node %s: %w (cause %s); set allowMerge to merge", Quote(req.Node.ID, 64), ErrConflict, CauseSummary(old.Cause))
	}
	if err := req.Node.Validate(now); err != nil {
		return StatusBadRequest, old, fmt.Errorf("block node %s: %w", Quote(req.Node.ID, 64), err)
	}
	t.Add(now, req.Node)
	n, _ := t.Get(req.Node.ID)
	return status, n, nil
}

// RemoveStatus is the status code of DELETE /blocklist/node/<id>: 200, or 404 when the
// node is not blocked.
func RemoveStatus(blocked bool) int {
	if blocked {
		return StatusOK
	}
	return StatusNotFound
}

// ApplyRemove unblocks id and returns the status code; a node that is not blocked
// returns StatusNotFound and ErrNotFound.
func (t *Tracker) ApplyRemove(id NodeID) (int, error) {
	if len(t.Remove(id)) == 0 {
		return StatusNotFound, fmt.Errorf("unblock node %s: %w", Quote(id, 64), ErrNotFound)
	}
	return StatusOK, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("expected a string, got %s", clip(raw))
	}
	return s, nil
}

func jsonInt64(raw json.RawMessage) (int64, error) {
	text := string(bytes.TrimSpace(raw))
	if s, err := jsonString(raw); err == nil {
		text = strings.TrimSpace(s)
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("expected an integer (unix milliseconds) as a number or string, got %s", clip(raw))
	}
	return v, nil
}

func jsonBool(raw json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return b, nil
	}
	if s, err := jsonString(raw); err == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("expected true or false, got %s", clip(raw))
}

func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
