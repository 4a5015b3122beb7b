package yarn

import (
	"sync"

	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// NMTokenCache keeps the newest NMToken per NodeManager, keyed by NodeId host:port. The RM
// sends a node's NMToken only once per attempt (and again when its key rolls), so losing one
// means never talking to that NodeManager again; AMRM fills the cache, NM reads it.
type NMTokenCache struct {
	mu     sync.Mutex
	tokens map[string]security.Token
}

// NewNMTokenCache returns an empty cache.
func NewNMTokenCache() *NMTokenCache {
	return &NMTokenCache{tokens: map[string]security.Token{}}
}

// Put stores tok for node, replacing any older token.
func (c *NMTokenCache) Put(node string, tok security.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens[node] = tok
}

// PutAll stores the tokens of an allocate or register response.
func (c *NMTokenCache) PutAll(tokens []*yarnpb.NMTokenProto) {
	for _, t := range tokens {
		if t.GetNodeId() == nil || t.GetToken() == nil {
			continue
		}
		c.Put(NodeIDString(t.GetNodeId()), security.TokenFromProto(t.GetToken()))
	}
}

// Get returns node's token.
func (c *NMTokenCache) Get(node string) (security.Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tokens[node]
	return t, ok
}

// Remove forgets node's token.
func (c *NMTokenCache) Remove(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tokens, node)
}

// Len is the number of nodes with a token.
func (c *NMTokenCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.tokens)
}
