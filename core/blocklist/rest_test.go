package blocklist

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseAddRequest(t *testing.T) {
	now := time.UnixMilli(1652313600000)
	tests := []struct {
		name      string
		id, body  string
		opts      ParseOptions
		want      AddRequest
		wantProbs []string
		tooLarge  bool
	}{
		{
			name: "seed example with strings",
			id:   "node1",
			body: `{"action":"MARK_BLOCKED","endTimestamp":"1652317200000","cause":"Hot machine","allowMerge":"true"}`,
			want: AddRequest{Node: BlockedNode{ID: "node1", Action: MarkBlocked, Start: now, End: time.UnixMilli(1652317200000), Cause: "Hot machine"}, AllowMerge: true},
		},
		{
			name: "numbers and booleans, permanent by omission",
			id:   "node2",
			body: `{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","cause":"No space left on device","allowMerge":false}`,
			want: AddRequest{Node: BlockedNode{ID: "node2", Action: MarkBlockedAndEvacuate, Start: now, Cause: "No space left on device", EndUnset: true}},
		},
		{
			name: "Long.MAX_VALUE is permanent, not left to the default timeout",
			id:   "n",
			body: `{"action":"MARK_BLOCKED","cause":"c","endTimestamp":9223372036854775807}`,
			want: AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlocked, Start: now, Cause: "c"}},
		},
		{
			name: "Long.MAX_VALUE as a string is permanent too",
			id:   "n",
			body: `{"action":"MARK_BLOCKED","cause":"c","endTimestamp":"9223372036854775807"}`,
			want: AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlocked, Start: now, Cause: "c"}},
		},
		{
			name: "no action takes blocklist.default-action",
			id:   "n",
			body: `{"cause":"c"}`,
			opts: ParseOptions{DefaultAction: MarkBlockedAndEvacuate},
			want: AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: now, Cause: "c", EndUnset: true}},
		},
		{
			name: "a null action takes the default as well",
			id:   "n",
			body: `{"cause":"c","action":null}`,
			opts: ParseOptions{DefaultAction: MarkBlocked},
			want: AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlocked, Start: now, Cause: "c", EndUnset: true}},
		},
		{
			name:      "an explicit action is still checked with a default configured",
			id:        "n",
			body:      `{"cause":"c","action":"EVICT"}`,
			opts:      ParseOptions{DefaultAction: MarkBlocked},
			wantProbs: []string{`unknown block action "EVICT"`},
		},
		{
			name:      "id of bytes that are not UTF-8 (%FF%FE)",
			id:        "\xff\xfe",
			body:      `{"action":"MARK_BLOCKED","cause":"c"}`,
			wantProbs: []string{`node id "\xff\xfe" is not valid UTF-8`},
		},
		{
			name:      "id with a control character",
			id:        "node\x1b[2J",
			body:      `{"action":"MARK_BLOCKED","cause":"c"}`,
			wantProbs: []string{`non-printable character U+001B`},
		},
		{
			name:      "id longer than a host name",
			id:        strings.Repeat("a", MaxNodeIDLength+1),
			body:      `{"action":"MARK_BLOCKED","cause":"c"}`,
			wantProbs: []string{"254 bytes long; at most 253"},
		},
		{
			name: "id of exactly the longest length",
			id:   strings.Repeat("a", MaxNodeIDLength),
			body: `{"action":"MARK_BLOCKED","cause":"c","endTimestamp":9223372036854775807}`,
			want: AddRequest{Node: BlockedNode{ID: strings.Repeat("a", MaxNodeIDLength), Action: MarkBlocked, Start: now, Cause: "c"}},
		},
		{
			name:      "cause over the bound is 413",
			id:        "n",
			body:      `{"action":"MARK_BLOCKED","cause":"` + strings.Repeat("x", 101) + `"}`,
			opts:      ParseOptions{Limits: Limits{MaxCauseLength: 100}},
			wantProbs: []string{`"cause" is 101 bytes; at most 100 are allowed (blocklist.cause.max-length)`},
			tooLarge:  true,
		},
		{
			name:      "cause over the bound with another problem is 400",
			id:        "n",
			body:      `{"action":"NOPE","cause":"` + strings.Repeat("x", 101) + `"}`,
			opts:      ParseOptions{Limits: Limits{MaxCauseLength: 100}},
			wantProbs: []string{`"cause" is 101 bytes`, `unknown block action`},
		},
		{
			name:      "empty body lists the required fields",
			id:        "n",
			body:      ``,
			wantProbs: []string{`"action" is required`, `"cause" is required`},
		},
		{
			name:      "every problem at once",
			id:        "",
			body:      `{"action":"BLOCK","cause":"","endTimestamp":"soon","allowMerge":"yes","timeout":5}`,
			wantProbs: []string{"node id is empty", `unknown field "timeout"`, `unknown block action "BLOCK"`, `"cause" is empty`, `"endTimestamp": expected an integer`, `"allowMerge": expected true or false`},
		},
		{
			name:      "end in the past",
			id:        "n",
			body:      `{"action":"MARK_BLOCKED","cause":"c","endTimestamp":1652313599999}`,
			wantProbs: []string{"is not after now"},
		},
		{
			name:      "negative end",
			id:        "n",
			body:      `{"action":"MARK_BLOCKED","cause":"c","endTimestamp":-5}`,
			wantProbs: []string{"expected unix milliseconds > 0"},
		},
		{
			name:      "not an object",
			id:        "n",
			body:      `[1,2]`,
			wantProbs: []string{"not a JSON object"},
		},
		{
			name:      "id with slash",
			id:        "a/b",
			body:      `{"action":"MARK_BLOCKED","cause":"c"}`,
			wantProbs: []string{"contains '/'"},
		},
		{
			name:      "action of the wrong type",
			id:        "n",
			body:      `{"action":1,"cause":"c"}`,
			wantProbs: []string{`"action": expected a string`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAddRequest(tt.id, []byte(tt.body), now, tt.opts)
			if len(tt.wantProbs) == 0 {
				if err != nil {
					t.Fatalf("ParseAddRequest() error = %v", err)
				}
				if !got.Node.Equal(tt.want.Node) || got.AllowMerge != tt.want.AllowMerge || got.Node.EndUnset != tt.want.Node.EndUnset {
					t.Fatalf("ParseAddRequest() = %+v, want %+v", got, tt.want)
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("ParseAddRequest() error = %v, want *RequestError", err)
			}
			if len(re.Problems) != len(tt.wantProbs) {
				t.Errorf("problems = %q, want %d of them", re.Problems, len(tt.wantProbs))
			}
			if want := map[bool]int{true: StatusRequestEntityTooLarge, false: StatusBadRequest}[tt.tooLarge]; re.Status() != want {
				t.Errorf("status = %d, want %d", re.Status(), want)
			}
			for _, w := range tt.wantProbs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestAddRequestBodyRoundTrip(t *testing.T) {
	now := time.UnixMilli(1000)
	body, err := json.Marshal(AddRequestBody{Action: MarkBlocked, EndTimestamp: 5000, Cause: "hot", AllowMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"MARK_BLOCKED","endTimestamp":"5000","cause":"hot","allowMerge":"true"}`; string(body) != want {
		t.Fatalf("body = %s, want %s", body, want)
	}
	req, err := ParseAddRequest("n", body, now, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !req.AllowMerge || !req.Node.End.Equal(time.UnixMilli(5000)) {
		t.Fatalf("parsed %+v", req)
	}
}

func TestStatusCodes(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	tr := NewTracker()
	steps := []struct {
		name       string
		req        AddRequest
		wantStatus int
		wantErr    error
		wantAction Action
		wantCause  string
	}{
		{"create", AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlocked, Start: now, Cause: "a"}}, StatusCreated, nil, MarkBlocked, "a"},
		{"conflict", AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: now, Cause: "b"}}, StatusConflict, ErrConflict, MarkBlocked, "a"},
		{"merge", AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: now, Cause: "b"}, AllowMerge: true}, StatusAccepted, nil, MarkBlockedAndEvacuate, "a,b"},
		{"invalid", AddRequest{Node: BlockedNode{ID: "m", Action: "X", Start: now}}, StatusBadRequest, ErrUnknownAction, "", ""},
	}
	for _, s := range steps {
		status, node, err := tr.ApplyAdd(now, s.req)
		if status != s.wantStatus || !errors.Is(err, s.wantErr) || (s.wantErr == nil) != (err == nil) {
			t.Fatalf("%s: ApplyAdd = %d, %v; want %d, %v", s.name, status, err, s.wantStatus, s.wantErr)
		}
		if node.Action != s.wantAction || node.Cause != s.wantCause {
			t.Fatalf("%s: node = %+v, want action %s cause %q", s.name, node, s.wantAction, s.wantCause)
		}
	}
	if status, err := tr.ApplyRemove("n"); status != StatusOK || err != nil {
		t.Fatalf("ApplyRemove(n) = %d, %v", status, err)
	}
	if status, err := tr.ApplyRemove("n"); status != StatusNotFound || !errors.Is(err, ErrNotFound) {
		t.Fatalf("second ApplyRemove(n) = %d, %v", status, err)
	}
}

func TestNewListResponse(t *testing.T) {
	nodes := []BlockedNode{
		{ID: "node1", Action: MarkBlocked, Start: time.UnixMilli(1652313600000), End: time.UnixMilli(1652317200000), Cause: "Hot machine"},
		{ID: "node2", Action: MarkBlockedAndEvacuate, Start: time.UnixMilli(1652315400000), Cause: "disk"},
	}
	resp := NewListResponse(nodes, func(id NodeID) []string {
		if id == "node1" {
			return []string{"container2", "container1"}
		}
		return nil
	})
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"node1":{"action":"MARK_BLOCKED","startTimestamp":"1652313600000","endTimestamp":"1652317200000","cause":"Hot machine","taskManagers":["container1","container2"]},` +
		`"node2":{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","startTimestamp":"1652315400000","endTimestamp":"9223372036854775807","cause":"disk","taskManagers":[]}}`
	if string(b) != want {
		t.Fatalf("body =\n%s\nwant\n%s", b, want)
	}
	if resp["node2"].EndTimestamp != math.MaxInt64 {
		t.Fatalf("permanent end = %d", resp["node2"].EndTimestamp)
	}
}

// FuzzParseAddRequest: any id and body either yield a *RequestError (400, or 413 when every
// problem is a bound) or a request whose id is printable UTF-8 within the length bound, whose
// cause fits, and that a Tracker accepts under the same limits.
func FuzzParseAddRequest(f *testing.F) {
	f.Add("node1", []byte(`{"action":"MARK_BLOCKED","endTimestamp":"1652317200000","cause":"Hot machine","allowMerge":"true"}`), false)
	f.Add("n", []byte(`{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","cause":"x","endTimestamp":9223372036854775807}`), true)
	f.Add("", []byte(`{`), false)
	f.Add("n", []byte(`null`), true)
	f.Add("\xff\xfe", []byte(`{"cause":"c"}`), true)
	f.Add("n", []byte(`{"cause":"\u001b]0;pwned\u0007\u001b[2J"}`), true)
	f.Add("n", []byte(`{"cause":"`+strings.Repeat("long ", 30)+`"}`), true)
	now := time.UnixMilli(1652313600000)
	lim := Limits{MaxCauseLength: 64, MaxMergedCauseLength: 128, MaxNodes: 2}
	f.Fuzz(func(t *testing.T, id string, body []byte, withDefault bool) {
		opts := ParseOptions{Limits: lim}
		if withDefault {
			opts.DefaultAction = MarkBlocked
		}
		req, err := ParseAddRequest(id, body, now, opts)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || len(re.Problems) == 0 {
				t.Fatalf("error %v is not a non-empty *RequestError", err)
			}
			if s := re.Status(); s != StatusBadRequest && s != StatusRequestEntityTooLarge {
				t.Fatalf("status %d", s)
			}
			return
		}
		if verr := ValidateNodeID(req.Node.ID); verr != nil {
			t.Fatalf("accepted id %q: %v", req.Node.ID, verr)
		}
		if len(req.Node.Cause) > lim.MaxCauseLength || req.Node.Cause == "" {
			t.Fatalf("accepted cause of %d bytes", len(req.Node.Cause))
		}
		if verr := req.Node.Validate(now); verr != nil {
			t.Fatalf("accepted request %+v does not validate: %v", req, verr)
		}
		tr := NewTracker()
		if err := CheckAdd(BlockedNode{}, false, tr.Len(), req.Node, lim); err != nil {
			t.Fatalf("CheckAdd of accepted request into an empty list: %v", err)
		}
		if status, _, err := tr.ApplyAdd(now, req); status != StatusCreated || err != nil {
			t.Fatalf("ApplyAdd of accepted request = %d, %v", status, err)
		}
	})
}

func TestCheckAdd(t *testing.T) {
	lim := Limits{MaxCauseLength: 10, MaxMergedCauseLength: 12, MaxNodes: 2}
	old := BlockedNode{ID: "n1", Action: MarkBlocked, Start: at(0), Cause: "disk"}
	tests := []struct {
		name    string
		old     BlockedNode
		exists  bool
		blocked int
		n       BlockedNode
		wantKey string
	}{
		{name: "new node with room", blocked: 1, n: BlockedNode{ID: "n2", Cause: "c"}},
		{name: "new node into a full list", blocked: 2, n: BlockedNode{ID: "n3", Cause: "c"}, wantKey: KeyMaxNodes},
		{name: "merge into a full list is fine", old: old, exists: true, blocked: 2, n: BlockedNode{ID: "n1", Cause: "net"}},
		{name: "merge of a repeated cause adds nothing", old: BlockedNode{ID: "n1", Cause: "0123456789"}, exists: true, blocked: 1, n: BlockedNode{ID: "n1", Cause: "0123456789"}},
		{name: "merge over the merged bound", old: old, exists: true, blocked: 1, n: BlockedNode{ID: "n1", Cause: "overheated"}, wantKey: KeyMaxMergedCauseLength},
		{name: "cause over its own bound", blocked: 0, n: BlockedNode{ID: "n2", Cause: "01234567890"}, wantKey: KeyMaxCauseLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAdd(tt.old, tt.exists, tt.blocked, tt.n, lim)
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("CheckAdd = %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Key != tt.wantKey {
				t.Fatalf("CheckAdd = %v, want a limit error on %s", err, tt.wantKey)
			}
			if !strings.Contains(err.Error(), tt.wantKey) {
				t.Fatalf("message %q does not name %s", err, tt.wantKey)
			}
		})
	}
}

func TestQuoteClipsAndEscapes(t *testing.T) {
	if got := Quote("a\x1b]0;x\a", 64); got != `"a\x1b]0;x\a"` {
		t.Errorf("Quote = %s", got)
	}
	long := strings.Repeat("é", 100)
	got := Quote(long, 9)
	if !strings.HasPrefix(got, `"éééé"…`) || !strings.HasSuffix(got, "(200 bytes)") {
		t.Errorf("Quote = %s", got)
	}
}
