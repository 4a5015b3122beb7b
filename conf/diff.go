package conf

import "sort"

// Change is one key whose effective value differs between two configurations. Values are in
// canonical form ("10 s"), "" for no value, "******" for secrets.
type Change struct {
	Key        string
	Old        string
	New        string
	Reloadable bool // the AM applies it live; false means it takes effect after a restart
}

// Diff lists the keys whose effective value in c differs from old, sorted by key. Declared
// options compare by parsed value, so a reformatted value ("10s" → "10 s") is no change. Unknown
// keys compare as written and are never reloadable.
func (c *Config) Diff(old *Config) []Change {
	if old == nil {
		old = Defaults()
	}
	var changes []Change
	for _, s := range registry.ordered {
		o, n := old.normalized(s.Key), c.normalized(s.Key)
		if o != n || (s.Secret && old.set[s.Key].value != c.set[s.Key].value) {
			changes = append(changes, Change{Key: s.Key, Old: o, New: n, Reloadable: s.Reloadable})
		}
	}
	unknown := map[string]bool{}
	for k := range old.set {
		unknown[k] = true
	}
	for k := range c.set {
		unknown[k] = true
	}
	for k := range unknown {
		if _, known := Lookup(k); known {
			continue
		}
		if o, n := old.set[k].value, c.set[k].value; o != n {
			changes = append(changes, Change{Key: k, Old: o, New: n})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Key < changes[j].Key })
	return changes
}
