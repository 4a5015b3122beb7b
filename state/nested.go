package state

// Nested is implemented by both backends: it keeps many entries under one key (map state:
// one stored entry per user key, AppendEntryKey) and values that grow without being read
// (list state). Entries are ordinary entries of their state for Get/Iterate/View and
// checkpoints; their key part is AppendEntryKey(key, sub).
type Nested interface {
	// DeclareNested says state holds entries under keys. The heap backend then keeps them
	// per key (so one key's entries are found without scanning the state) and files flat
	// Put/Get/Delete of the state's entry keys there too; Pebble needs nothing.
	DeclareNested(state string) error
	// GetEntry returns a copy of the value of (key, sub).
	GetEntry(kg int, state string, key, sub []byte) ([]byte, bool, error)
	// PutEntry sets the value of (key, sub).
	PutEntry(kg int, state string, key, sub, value []byte) error
	// DeleteEntry removes (key, sub); a missing entry is not an error.
	DeleteEntry(kg int, state string, key, sub []byte) error
	// IterateEntries calls fn for every entry of key (Pebble: in sub order). sub and value
	// are valid only during the call; fn may put and delete entries of key (entries it adds
	// may or may not be visited) but nothing else.
	IterateEntries(kg int, state string, key []byte, fn func(sub, value []byte) error) error
	// DeleteEntries removes every entry of key (Pebble: one range deletion).
	DeleteEntries(kg int, state string, key []byte) error
	// Append appends value to the value of (kg, state, key), creating it, without reading
	// it first (Pebble: a merge, concatenated at read and compaction time).
	Append(kg int, state string, key, value []byte) error
}

var (
	_ Nested = (*Heap)(nil)
	_ Nested = (*PebbleBackend)(nil)
)
