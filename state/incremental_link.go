package state

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// linkFrom is ingestFrom without copying the bulk of the entries: the source's
// bottom-level tables are ingested as they are (hard links: no byte read or written),
// and only the keys of its other tables are written anew, into one table ingested above
// them with their current values (or a deletion), so that whatever newer tables changed
// shadows the bottom level. What the linked tables hold outside key groups from..to is
// excised afterwards. At 1 GiB the copy of a merge was most of a switch's downtime (a
// standby's range merged at a TaskManager loss: 7.6 s for 512 MiB on a loaded machine).
//
// A bottom-level table is linked only if it is a physical file whose entries all carry
// one sequence number (a compaction's output at the bottom, where Pebble zeroes them, or
// a table ingested before) and it has no range deletions or range keys: then Pebble
// ingests it under a sequence number of its own, and it holds nothing but live entries of
// the source's own key groups. ok is false (nothing changed) when the source has no such
// tables, or when its other tables are larger than them (the overlay would not be much
// cheaper than the copy); the caller copies then.
func (p *PebbleBackend) linkFrom(ctx context.Context, opts PebbleOptions, src *pebble.DB, srcDir, tmp string, from, to int, rs RestoreSource) (int64, bool, error) {
	if !linkMerges {
		return 0, false, nil
	}
	lo, hi := keyGroupBounds(from, to)
	levels, placeholder, err := tablesInRange(src, rs, lo, hi)
	if err != nil || placeholder != "" {
		return 0, false, err // a placeholder: only the copy's bounded iterator never reads it
	}
	// What links, level by level from the bottom: each level's tables go in one
	// ingestion (they do not overlap), level 0's by age in runs of tables that do not
	// overlap each other, so that each ingestion's sequence number orders it above the
	// older data as in the source.
	groups := make([][]string, len(levels)-1)
	var l0 []pebble.SSTableInfo
	var l0paths []string
	add := func(level int, t pebble.SSTableInfo, path string) {
		if level == 0 {
			l0, l0paths = append(l0, t), append(l0paths, path)
			return
		}
		g := len(levels) - 1 - level
		groups[g] = append(groups[g], path)
	}
	slices.SortStableFunc(levels[0], func(a, b pebble.SSTableInfo) int { return cmp.Compare(a.LargestSeqNum, b.LargestSeqNum) })
	var upper []pebble.SSTableInfo
	var linkBytes, upperBytes, virtualBytes, mixedBytes, preparedBytes uint64
	linked := 0
	for level, tables := range levels {
		for _, t := range tables {
			name := fmt.Sprintf("%s.sst", t.BackingSSTNum)
			if hasRanges(t) {
				logger(opts).Info("pebble restore: copying the source's entries: a table has range deletions or range keys", "table", name, "level", level)
				return 0, false, nil // what it deletes in the linked tables is no key of its own
			}
			path := filepath.Join(srcDir, name)
			asIs, err := linksAsIs(ctx, t, path)
			if err != nil {
				return 0, false, err
			}
			if asIs {
				add(level, t, path)
				linkBytes += t.Size
				linked++
				continue
			}
			if prepared, ok := opts.Linkable.find(rs, name, t); ok {
				// Linked into tmp first: the local copy it was made from may be
				// dropped (and the prepared table with it) while this restore runs.
				path := filepath.Join(tmp, "prepared-"+filepath.Base(prepared))
				if err := os.Link(prepared, path); err == nil {
					add(level, t, path)
					linkBytes += t.Size
					preparedBytes += t.Size
					linked++
					continue
				}
			}
			if level == len(levels)-1 && t.Virtual {
				virtualBytes += t.Size
			} else if level == len(levels)-1 {
				mixedBytes += t.Size
			}
			upper = append(upper, t)
			upperBytes += t.Size
		}
	}
	groups = append(groups, levelZeroRuns(l0, l0paths)...)
	// The overlay rewrites about the other tables' bytes, and a Get per key where the
	// copy iterates: worth it while they are at most as large as what is linked.
	if linked == 0 || upperBytes > linkBytes {
		logger(opts).Info("pebble restore: copying the source's entries: too few tables to link",
			"key_groups", fmt.Sprintf("%d-%d", from, to), "linkable_bytes", linkBytes, "other_bytes", upperBytes,
			"bottom_virtual_bytes", virtualBytes, "bottom_mixed_seqnum_bytes", mixedBytes)
		return 0, false, nil
	}
	// The overlay goes last: every key of a table not linked, with its newest value in
	// the source (or a deletion), above whatever was linked.
	overlay, size, err := p.writeOverlay(ctx, src, srcDir, tmp, lo, hi, upper)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		// Nothing changed yet: the copy takes over (and reports what it cannot read).
		logger(opts).Warn("pebble restore: writing the newer entries over the linked tables failed; copying instead", "err", err)
		return 0, false, nil
	}
	if err := p.beforeDirect(true); err != nil {
		return 0, false, err
	}
	first := true
	ingestions := 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		ingestions++
		if err := p.db.Ingest(ctx, g); err != nil {
			if first {
				// Refused as a whole (a table's entries were not what its bounds
				// told): nothing changed, the copy takes over.
				logger(opts).Info("pebble restore: linking the source's tables refused; copying their entries", "err", err)
				return 0, false, nil
			}
			return 0, true, fmt.Errorf("linking the source's tables: %w", err)
		}
		first = false
	}
	if overlay != "" {
		if err := p.db.Ingest(ctx, []string{overlay}); err != nil {
			return 0, true, fmt.Errorf("ingesting the newer entries over %d linked tables: %w", linked, err)
		}
	}
	if err := p.excise(ctx, from, to); err != nil {
		return 0, true, err
	}
	logger(opts).Info("pebble restore: linked the source's tables", "key_groups", fmt.Sprintf("%d-%d", from, to),
		"linked_tables", linked, "ingestions", ingestions, "linked_bytes", linkBytes, "prepared_bytes", preparedBytes, "overlay_tables", len(upper), "overlay_bytes", size)
	return int64(size), true, nil
}

// tablesInRange lists the tables of src, by level, that hold entries within lo..hi (hi
// nil: to the end), with their properties; placeholder names a table of rs that was
// never fetched (a sparse file of zeros, listed but not read: nothing else is returned).
func tablesInRange(src *pebble.DB, rs RestoreSource, lo, hi []byte) (levels [][]pebble.SSTableInfo, placeholder string, err error) {
	end := hi
	if end == nil {
		end = []byte{0xff, 0xff, 0xff}
	}
	// Without properties first: reading them would read a placeholder.
	all, err := src.SSTables(pebble.WithKeyRangeFilter(lo, end))
	if err != nil {
		return nil, "", fmt.Errorf("listing the source's tables: %w", err)
	}
	for _, tables := range all {
		for _, t := range tables {
			name := fmt.Sprintf("%s.sst", t.BackingSSTNum)
			if _, ok := rs.Placeholders[name]; ok {
				return nil, name, nil
			}
		}
	}
	if all, err = src.SSTables(pebble.WithKeyRangeFilter(lo, end), pebble.WithProperties()); err != nil {
		return nil, "", fmt.Errorf("listing the source's tables: %w", err)
	}
	levels = make([][]pebble.SSTableInfo, len(all))
	for level, tables := range all {
		for _, t := range tables {
			if bytes.Compare(t.Largest.UserKey, lo) >= 0 && (hi == nil || bytes.Compare(t.Smallest.UserKey, hi) < 0) {
				levels[level] = append(levels[level], t)
			}
		}
	}
	return levels, "", nil
}

// hasRanges: the table has range deletions or range keys (or unknown properties). What
// such a table deletes is no key of its own, so neither it nor a prepared copy of it
// can be linked.
func hasRanges(t pebble.SSTableInfo) bool {
	return t.Properties == nil || t.Properties.NumRangeDeletions > 0 || t.Properties.NumRangeKeys() > 0
}

// linksAsIs reports whether table t (its file at path) can be ingested as it is: a
// physical file whose entries carry one sequence number, zero (a compaction's output at
// the bottom) or one Pebble gave an ingested table (its entries are zero). A flushed
// table's single write has one non-zero sequence number, which ingestion refuses.
func linksAsIs(ctx context.Context, t pebble.SSTableInfo, path string) (bool, error) {
	if t.Virtual || t.SmallestSeqNum != t.LargestSeqNum {
		return false, nil
	}
	if t.LargestSeqNum == 0 {
		return true, nil
	}
	zero, err := zeroSeqNums(ctx, path)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", filepath.Base(path), err)
	}
	return zero, nil
}

// levelZeroRuns cuts level-0 tables (oldest first) into runs to ingest one after the
// other: a table joins the current run unless it overlaps a table in it, so that of two
// overlapping tables the newer is ingested later, above the older.
func levelZeroRuns(tables []pebble.SSTableInfo, paths []string) [][]string {
	var runs [][]string
	var cur []pebble.SSTableInfo
	for i, t := range tables {
		clash := false
		for _, c := range cur {
			if bytes.Compare(t.Smallest.UserKey, c.Largest.UserKey) <= 0 && bytes.Compare(c.Smallest.UserKey, t.Largest.UserKey) <= 0 {
				clash = true
				break
			}
		}
		if clash || len(runs) == 0 {
			runs, cur = append(runs, nil), nil
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], paths[i])
		cur = append(cur, t)
	}
	return runs
}

// linkMerges: linkFrom may link (tests turn it off to compare with the copy).
var linkMerges = true

func logger(opts PebbleOptions) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.Default()
}

// writeOverlay writes, into one table in tmp, every key of the tables in upper within
// lo..hi (and within each table's bounds: a virtual table's file holds excised entries
// too) with its value in src, or a deletion where src has none. It returns "" if there
// are no such keys, and the bytes written.
func (p *PebbleBackend) writeOverlay(ctx context.Context, src *pebble.DB, srcDir, tmp string, lo, hi []byte, upper []pebble.SSTableInfo) (string, uint64, error) {
	var keys [][]byte
	for _, t := range upper {
		l, h := lo, hi
		if bytes.Compare(t.Smallest.UserKey, l) > 0 {
			l = t.Smallest.UserKey
		}
		// Largest may be an exclusive bound (a range's end), or inclusive: the upper
		// bound is the key just after it.
		end := append(slices.Clip(t.Largest.UserKey), 0)
		if h == nil || bytes.Compare(end, h) < 0 {
			h = end
		}
		got, err := tableKeys(ctx, filepath.Join(srcDir, fmt.Sprintf("%s.sst", t.BackingSSTNum)), l, h)
		if err != nil {
			return "", 0, err
		}
		keys = append(keys, got...)
	}
	if len(keys) == 0 {
		return "", 0, nil
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	po := &pebble.Options{}
	po.EnsureDefaults()
	setFilters(po)
	name := filepath.Join(tmp, "overlay.sst")
	f, err := noSyncFS{vfs.Default}.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", 0, err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), po.MakeWriterOptions(0, p.db.TableFormat()))
	for _, k := range keys {
		if ctx.Err() != nil {
			_ = w.Close()
			return "", 0, ctx.Err()
		}
		v, closer, err := src.Get(k)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			err = w.Delete(k)
		case err == nil:
			err = w.Set(k, v)
			_ = closer.Close()
		}
		if err != nil {
			_ = w.Close()
			return "", 0, err
		}
	}
	if err := w.Close(); err != nil {
		return "", 0, err
	}
	meta, err := w.Metadata()
	if err != nil {
		return "", 0, err
	}
	return name, meta.Size, nil
}

// zeroSeqNums reports whether the first and last entries of the table file at path (what
// ingestion checks) carry sequence number zero.
func zeroSeqNums(ctx context.Context, path string) (bool, error) {
	zero := true
	err := readTable(ctx, path, nil, nil, func(it sstable.Iterator) {
		if kv := it.First(); kv != nil && kv.K.SeqNum() != 0 {
			zero = false
		}
		if kv := it.Last(); kv != nil && kv.K.SeqNum() != 0 {
			zero = false
		}
	})
	return zero, err
}

// tableKeys lists the user keys of the table file at path within lo..hi (hi exclusive).
func tableKeys(ctx context.Context, path string, lo, hi []byte) ([][]byte, error) {
	var keys [][]byte
	err := readTable(ctx, path, lo, hi, func(it sstable.Iterator) {
		for kv := it.First(); kv != nil; kv = it.Next() {
			keys = append(keys, slices.Clone(kv.K.UserKey))
		}
	})
	return keys, err
}

// readTable opens the table file at path and hands read an iterator over its point
// entries within lo..hi (nil: unbounded).
func readTable(ctx context.Context, path string, lo, hi []byte, read func(sstable.Iterator)) error {
	f, err := vfs.Default.Open(path)
	if err != nil {
		return err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		_ = f.Close()
		return err
	}
	po := &pebble.Options{}
	po.EnsureDefaults()
	r, err := sstable.NewReader(ctx, readable, po.MakeReaderOptions())
	if err != nil {
		_ = readable.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	it, err := r.NewIter(sstable.NoTransforms, lo, hi, sstable.AssertNoBlobHandles)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	read(it)
	if err := it.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
