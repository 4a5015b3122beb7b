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
		want      AddRequest
		wantProbs []string
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
			want: AddRequest{Node: BlockedNode{ID: "node2", Action: MarkBlockedAndEvacuate, Start: now, Cause: "No space left on device"}},
		},
		{
			name: "Long.MAX_VALUE is permanent",
			id:   "n",
			body: `{"action":"MARK_BLOCKED","cause":"c","endTimestamp":9223372036854775807}`,
			want: AddRequest{Node: BlockedNode{ID: "n", Action: MarkBlocked, Start: now, Cause: "c"}},
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
			got, err := ParseAddRequest(tt.id, []byte(tt.body), now)
			if len(tt.wantProbs) == 0 {
				if err != nil {
					t.Fatalf("ParseAddRequest() error = %v", err)
				}
				if !got.Node.Equal(tt.want.Node) || got.AllowMerge != tt.want.AllowMerge {
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
	req, err := ParseAddRequest("n", body, now)
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

func FuzzParseAddRequest(f *testing.F) {
	f.Add("node1", []byte(`{"action":"MARK_BLOCKED","endTimestamp":"1652317200000","cause":"Hot machine","allowMerge":"true"}`))
	f.Add("n", []byte(`{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","cause":"x","endTimestamp":9223372036854775807}`))
	f.Add("", []byte(`{`))
	f.Add("n", []byte(`null`))
	now := time.UnixMilli(1652313600000)
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		req, err := ParseAddRequest(id, body, now)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || len(re.Problems) == 0 {
				t.Fatalf("error %v is not a non-empty *RequestError", err)
			}
			return
		}
		if verr := req.Node.Validate(now); verr != nil {
			t.Fatalf("accepted request %+v does not validate: %v", req, verr)
		}
		tr := NewTracker()
		if status, _, err := tr.ApplyAdd(now, req); status != StatusCreated || err != nil {
			t.Fatalf("ApplyAdd of accepted request = %d, %v", status, err)
		}
	})
}
