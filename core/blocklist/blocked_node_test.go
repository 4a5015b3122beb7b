package blocklist

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2024, 5, 12, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestParseAction(t *testing.T) {
	tests := []struct {
		in      string
		want    Action
		wantErr bool
	}{
		{"MARK_BLOCKED", MarkBlocked, false},
		{"MARK_BLOCKED_AND_EVACUATE_TASKS", MarkBlockedAndEvacuate, false},
		{"mark_blocked", "", true},
		{"", "", true},
		{"EVACUATE", "", true},
	}
	for _, tt := range tests {
		got, err := ParseAction(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseAction(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrUnknownAction) {
			t.Errorf("ParseAction(%q) error %v does not wrap ErrUnknownAction", tt.in, err)
		}
	}
}

func TestValidate(t *testing.T) {
	now := at(time.Hour)
	tests := []struct {
		name    string
		node    BlockedNode
		wantErr []string
	}{
		{"permanent", BlockedNode{ID: "n1", Action: MarkBlocked, Start: now}, nil},
		{"with end", BlockedNode{ID: "n1", Action: MarkBlockedAndEvacuate, Start: now, End: now.Add(time.Minute)}, nil},
		{"blank id", BlockedNode{ID: " ", Action: MarkBlocked, Start: now}, []string{"white space"}},
		{"id not UTF-8", BlockedNode{ID: "\xff\xfe", Action: MarkBlocked, Start: now}, []string{"not valid UTF-8"}},
		{"unknown action", BlockedNode{ID: "n1", Action: "BLOCK", Start: now}, []string{`unknown block action "BLOCK"`}},
		{"no start", BlockedNode{ID: "n1", Action: MarkBlocked}, []string{"start time missing"}},
		{"end before start", BlockedNode{ID: "n1", Action: MarkBlocked, Start: now.Add(2 * time.Hour), End: now.Add(time.Hour)}, []string{"is not after start"}},
		{"end equals now", BlockedNode{ID: "n1", Action: MarkBlocked, Start: at(0), End: now}, []string{"already expired"}},
		{"everything wrong", BlockedNode{}, []string{"node id is empty", "unknown block action", "start time missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.node.Validate(now)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors containing %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		a, b BlockedNode
		want BlockedNode
	}{
		{
			name: "stronger action, later end, earlier start, both causes",
			a:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(10), End: at(100), Cause: "hot"},
			b:    BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: at(5), End: at(200), Cause: "disk"},
			want: BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: at(5), End: at(200), Cause: "hot,disk"},
		},
		{
			name: "evacuate is kept against a weaker newcomer",
			a:    BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: at(5), End: at(300), Cause: "disk"},
			b:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(10), End: at(200), Cause: "disk"},
			want: BlockedNode{ID: "n", Action: MarkBlockedAndEvacuate, Start: at(5), End: at(300), Cause: "disk"},
		},
		{
			name: "permanent beats any end (new permanent)",
			a:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), End: at(100), Cause: "a"},
			b:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(1), Cause: "b"},
			want: BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), Cause: "a,b"},
		},
		{
			name: "permanent beats any end (old permanent)",
			a:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), Cause: "a"},
			b:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(1), End: at(1000), Cause: "a"},
			want: BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), Cause: "a"},
		},
		{
			name: "duplicate causes inside lists are dropped",
			a:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), Cause: "a,b"},
			b:    BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), Cause: "b, c,a"},
			want: BlockedNode{ID: "n", Action: MarkBlocked, Start: at(0), Cause: "a,b,c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Merge(tt.b); !got.Equal(tt.want) {
				t.Fatalf("Merge() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
