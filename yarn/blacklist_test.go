package yarn

import (
	"slices"
	"testing"
)

func TestBlacklistDeltas(t *testing.T) {
	type step struct {
		add, rem []string
		// what the next allocate sends; nil slices mean no request at all
		wantAdd, wantRem []string
		wantAll          []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"add then nothing", []step{
			{add: []string{"a", "b"}, wantAdd: []string{"a", "b"}, wantRem: []string{}, wantAll: []string{"a", "b"}},
			{wantAll: []string{"a", "b"}},
		}},
		{"add and remove before sending cancel out to a removal", []step{
			{add: []string{"a"}, rem: []string{"a"}, wantAdd: []string{}, wantRem: []string{"a"}, wantAll: []string{}},
		}},
		{"remove of an unknown node is not sent", []step{
			{rem: []string{"zzz"}, wantAll: []string{}},
		}},
		{"remove after sending", []step{
			{add: []string{"a", "b"}, wantAdd: []string{"a", "b"}, wantRem: []string{}, wantAll: []string{"a", "b"}},
			{rem: []string{"a"}, wantAdd: []string{}, wantRem: []string{"a"}, wantAll: []string{"b"}},
		}},
		{"a single addition is sent once", []step{
			{add: []string{"a"}, wantAdd: []string{"a"}, wantRem: []string{}, wantAll: []string{"a"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBlacklist()
			for i, s := range tt.steps {
				if err := b.update(s.add, s.rem); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				req := b.take()
				if s.wantAdd == nil && s.wantRem == nil {
					if req != nil {
						t.Errorf("step %d: sent %v, want nothing", i, req)
					}
				} else if req == nil || !slices.Equal(req.GetBlacklistAdditions(), s.wantAdd) && !(len(req.GetBlacklistAdditions()) == 0 && len(s.wantAdd) == 0) ||
					!slices.Equal(req.GetBlacklistRemovals(), s.wantRem) && !(len(req.GetBlacklistRemovals()) == 0 && len(s.wantRem) == 0) {
					t.Errorf("step %d: sent %v, want +%v -%v", i, req, s.wantAdd, s.wantRem)
				}
				if got := b.nodes(); !slices.Equal(got, s.wantAll) {
					t.Errorf("step %d: blacklist %v, want %v", i, got, s.wantAll)
				}
			}
		})
	}
}

func TestBlacklistRestoreAndResync(t *testing.T) {
	b := newBlacklist()
	_ = b.update([]string{"a", "b"}, nil)
	req := b.take()
	// The allocate failed; meanwhile b was removed again. a must go out again, b must not.
	_ = b.update(nil, []string{"b"})
	b.restore(req)
	again := b.take()
	if !slices.Equal(again.GetBlacklistAdditions(), []string{"a"}) || !slices.Equal(again.GetBlacklistRemovals(), []string{"b"}) {
		t.Errorf("after restore sent %v", again)
	}
	b.resync()
	full := b.take()
	if !slices.Equal(full.GetBlacklistAdditions(), []string{"a"}) || len(full.GetBlacklistRemovals()) != 0 {
		t.Errorf("after resync sent %v", full)
	}
	for _, bad := range []string{"*", ""} {
		if err := b.update([]string{bad}, nil); err == nil {
			t.Errorf("blacklisting %q accepted", bad)
		}
	}
}
