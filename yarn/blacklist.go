package yarn

import (
	"fmt"
	"slices"

	"github.com/tidestream/tide/yarn/yarnpb"
)

// blacklist tracks an application's blacklist the way the RM needs it: the full set (to send
// again after a resync) and the additions and removals not yet sent. An addition cancels a
// pending removal of the same node and vice versa.
type blacklist struct {
	all      map[string]bool
	add, rem map[string]bool
}

func newBlacklist() *blacklist {
	return &blacklist{all: map[string]bool{}, add: map[string]bool{}, rem: map[string]bool{}}
}

// update records additions and removals. "*" (ResourceRequest.ANY) is refused, as the RM
// would refuse it: it blacklists the whole cluster.
func (b *blacklist) update(additions, removals []string) error {
	for _, n := range additions {
		if n == "*" || n == "" {
			return fmt.Errorf("blacklist addition %q: %w", n, errBadBlacklistEntry)
		}
	}
	for _, n := range additions {
		b.all[n] = true
		delete(b.rem, n)
		b.add[n] = true
	}
	for _, n := range removals {
		if !b.all[n] && !b.add[n] {
			continue
		}
		delete(b.all, n)
		delete(b.add, n)
		b.rem[n] = true
	}
	return nil
}

// take returns the pending request (nil when nothing changed) and clears it.
func (b *blacklist) take() *yarnpb.ResourceBlacklistRequestProto {
	if len(b.add) == 0 && len(b.rem) == 0 {
		return nil
	}
	req := &yarnpb.ResourceBlacklistRequestProto{BlacklistAdditions: sortedKeys(b.add), BlacklistRemovals: sortedKeys(b.rem)}
	b.add, b.rem = map[string]bool{}, map[string]bool{}
	return req
}

// restore puts back a request that was not delivered, unless later updates superseded it.
func (b *blacklist) restore(req *yarnpb.ResourceBlacklistRequestProto) {
	for _, n := range req.GetBlacklistAdditions() {
		if b.all[n] && !b.rem[n] {
			b.add[n] = true
		}
	}
	for _, n := range req.GetBlacklistRemovals() {
		if !b.all[n] && !b.add[n] {
			b.rem[n] = true
		}
	}
}

// resync makes the next request carry the whole set, for an RM that forgot it.
func (b *blacklist) resync() {
	b.add = map[string]bool{}
	for n := range b.all {
		b.add[n] = true
	}
	b.rem = map[string]bool{}
}

func (b *blacklist) nodes() []string { return sortedKeys(b.all) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
