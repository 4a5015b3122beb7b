package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// LinkableTables keeps prepared copies of bottom-level tables that a merging restore
// cannot link as they are: a table moved down to the bottom level with the sequence
// numbers of its writes, or a view of a file cut by an earlier excise (linkFrom). A
// prepared copy holds the same entries, each with sequence number zero and in a physical
// file of its own, so the restore ingests it like a compaction's output instead of
// rewriting those entries during the switch (at 1 GiB about a third of a source's bottom
// level, 0.7 s of a 0.9 s standby restore on a quiet machine).
//
// A standby or warm-up copy prepares them while the job runs elsewhere (Prepare, after
// each checkpoint it follows); a source's tables are immutable and named uniquely in the
// checkpoint storage, so a prepared table stays valid for every later checkpoint that
// still lists it, and following a checkpoint prepares only tables new at the bottom.
// A prepared table is kept while the local file it was made from is (Prune).
type LinkableTables struct {
	dir string

	mu   sync.Mutex
	from map[string]sourceFile // prepared file name -> the file it was made from
}

// sourceFile names a source table: the caller's tag for its source (the vertex), its
// handle in checkpoint storage and its size.
type sourceFile struct {
	tag, handle string
	size        int64
}

// OpenLinkableTables returns the prepared tables kept in dir, which it empties: what an
// earlier process prepared names no copy of this one.
func OpenLinkableTables(dir string) (*LinkableTables, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("linkable tables %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("linkable tables %s: %w", dir, err)
	}
	return &LinkableTables{dir: dir, from: map[string]sourceFile{}}, nil
}

// Dir is where the prepared tables are.
func (l *LinkableTables) Dir() string { return l.dir }

// Remove deletes every prepared table and the directory.
func (l *LinkableTables) Remove() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.from = map[string]sourceFile{}
	return os.RemoveAll(l.dir)
}

// name is the prepared copy's file name for the table of a source known in checkpoint
// storage as handle (unique: its tables never change), viewed within t's bounds.
func linkableName(handle string, t pebble.SSTableInfo) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%t\x00%x\x00%x\x00%t", handle, t.Virtual, t.Smallest.UserKey, t.Largest.UserKey, t.Largest.IsExclusiveSentinel())
	return hex.EncodeToString(h.Sum(nil)[:16]) + ".sst"
}

// find returns the prepared copy of the table t of a source whose files rs names, if
// there is one.
func (l *LinkableTables) find(rs RestoreSource, name string, t pebble.SSTableInfo) (string, bool) {
	if l == nil {
		return "", false
	}
	handle, ok := rs.Handles[name]
	if !ok {
		return "", false
	}
	p := filepath.Join(l.dir, linkableName(handle, t))
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}

// Prepared reports whether a table of the source file known in checkpoint storage as
// handle has a prepared copy: a restore merges such a source cheaply, and takes as its
// base (which it never rewrites) a source without.
func (l *LinkableTables) Prepared(handle string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.from {
		if f.handle == handle {
			return true
		}
	}
	return false
}

// PrepareStats says what one Prepare found and did.
type PrepareStats struct {
	// Tables and Bytes: the tables in range that need a prepared copy (all of
	// them have one afterwards unless an error came); Written: those prepared now (the
	// others were prepared for an earlier checkpoint).
	Tables, Written int
	Bytes           uint64
}

// Prepare makes sure every table of the source rs (one database checkpoint,
// every file local and rs.Handles naming each) holding entries of key groups from..to
// either links as it is or has a prepared copy. Prune hands tag back.
func (l *LinkableTables) Prepare(ctx context.Context, opts PebbleOptions, tag string, rs RestoreSource, from, to int) (PrepareStats, error) {
	var st PrepareStats
	if err := checkRange(from, to); err != nil {
		return st, err
	}
	if opts.Dir == "" {
		opts.Dir = os.TempDir()
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return st, err
	}
	tmp, err := os.MkdirTemp(opts.Dir, "tide-prepare-")
	if err != nil {
		return st, err
	}
	defer os.RemoveAll(tmp)
	src, err := openSource(tmp, opts, rs)
	if err != nil {
		return st, fmt.Errorf("preparing a restore source: %w", err)
	}
	defer src.db.Close()
	lo, hi := keyGroupBounds(from, to)
	levels, placeholder, err := tablesInRange(src.db, rs, lo, hi)
	if err != nil {
		return st, err
	}
	if placeholder != "" {
		return st, fmt.Errorf("preparing a restore source: table %s is not local", placeholder)
	}
	for _, t := range slices.Concat(levels...) {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		if hasRanges(t) {
			continue // linkFrom copies such a source's entries anyway
		}
		name := fmt.Sprintf("%s.sst", t.BackingSSTNum)
		path := filepath.Join(tmp, name)
		asIs, err := linksAsIs(ctx, t, path)
		if err != nil {
			return st, err
		}
		if asIs {
			continue
		}
		handle, ok := rs.Handles[name]
		if !ok {
			return st, fmt.Errorf("preparing a restore source: table %s has no handle", name)
		}
		fi, err := os.Stat(rs.Files[name])
		if err != nil {
			return st, fmt.Errorf("preparing a restore source: %w", err)
		}
		out := linkableName(handle, t)
		if _, err := os.Stat(filepath.Join(l.dir, out)); err == nil {
			st.Tables++
			st.Bytes += t.Size
			continue
		}
		ok, err = writeLinkable(ctx, path, t, filepath.Join(l.dir, out), src.db.TableFormat())
		if err != nil {
			return st, fmt.Errorf("preparing %s: %w", name, err)
		}
		if !ok {
			continue
		}
		l.mu.Lock()
		l.from[out] = sourceFile{tag: tag, handle: handle, size: fi.Size()}
		l.mu.Unlock()
		st.Tables++
		st.Bytes += t.Size
		st.Written++
	}
	return st, nil
}

// Prune deletes the prepared tables whose source file keep no longer wants (its local
// copy is gone), and returns how many it deleted.
func (l *LinkableTables) Prune(keep func(tag, handle string, size int64) bool) int {
	l.mu.Lock()
	var drop []string
	for name, f := range l.from {
		if !keep(f.tag, f.handle, f.size) {
			drop = append(drop, name)
			delete(l.from, name)
		}
	}
	l.mu.Unlock()
	for _, name := range drop {
		_ = os.Remove(filepath.Join(l.dir, name))
	}
	return len(drop)
}

// errNotLinkable: a table holds entries a prepared copy cannot express (several versions
// of a key with merge operands).
var errNotLinkable = errors.New("several versions of a key with a merge operand")

// writeLinkable writes the entries of table t (its file at path, within t's bounds) into
// a new table at dst with sequence number zero: the newest version of each key, which is
// what the table contributes wherever it sits (a restore ingests the tables of each level
// of the source in order, so that each shadows the older ones as in the source). ok is
// false, and nothing written, when the table holds several versions of a key one of
// which is a merge operand (only the merge operator could combine them), or nothing.
func writeLinkable(ctx context.Context, path string, t pebble.SSTableInfo, dst string, format sstable.TableFormat) (bool, error) {
	lo := t.Smallest.UserKey
	hi := t.Largest.UserKey
	if !t.Largest.IsExclusiveSentinel() {
		hi = append(slices.Clip(hi), 0) // the key just after the inclusive largest
	}
	po := &pebble.Options{}
	po.EnsureDefaults()
	setFilters(po)
	tmp := dst + ".tmp"
	f, err := noSyncFS{vfs.Default}.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return false, err
	}
	// Level 0's writer options: those of the bottom level mark deletions obsolete.
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), po.MakeWriterOptions(0, format))
	var prev []byte
	var prevMerge, havePrev, entries bool
	var werr error
	rerr := readTable(ctx, path, lo, hi, func(it sstable.Iterator) {
		var vbuf []byte
		for kv := it.First(); kv != nil; kv = it.Next() {
			if ctx.Err() != nil {
				werr = ctx.Err()
				return
			}
			kind := kv.Kind()
			if havePrev && bytes.Equal(kv.K.UserKey, prev) {
				if prevMerge || kind == pebble.InternalKeyKindMerge {
					werr = errNotLinkable
					return
				}
				continue // an older version
			}
			prev = append(prev[:0], kv.K.UserKey...)
			havePrev, prevMerge = true, kind == pebble.InternalKeyKindMerge
			switch kind {
			case pebble.InternalKeyKindSet, pebble.InternalKeyKindSetWithDelete, pebble.InternalKeyKindMerge:
				v, _, err := kv.Value(vbuf[:0])
				if err != nil {
					werr = err
					return
				}
				if kind == pebble.InternalKeyKindMerge {
					werr = w.Merge(kv.K.UserKey, v)
				} else {
					werr = w.Set(kv.K.UserKey, v)
				}
			case pebble.InternalKeyKindDelete, pebble.InternalKeyKindDeleteSized, pebble.InternalKeyKindSingleDelete:
				// A single deletion removes the one version below it: a deletion does too.
				werr = w.Delete(kv.K.UserKey)
			default:
				werr = fmt.Errorf("entry of kind %s", kind)
			}
			if werr != nil {
				return
			}
			entries = true
		}
	})
	cerr := w.Close()
	if err := errors.Join(rerr, werr); err != nil || cerr != nil || !entries {
		_ = os.Remove(tmp)
		if errors.Is(werr, errNotLinkable) {
			return false, nil
		}
		if err == nil && cerr == nil {
			return false, nil // empty within its bounds
		}
		return false, errors.Join(err, cerr)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return false, err
	}
	return true, nil
}
