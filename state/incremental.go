package state

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DBFile is one file of a Pebble checkpoint of a backend (see PebbleBackend.Checkpoint).
type DBFile struct {
	// Name is the file's base name in the database directory ("000012.sst", "MANIFEST-000001").
	Name string `json:"name"`
	Size int64  `json:"size"`
	// Table marks an immutable sstable: the same name in the same database lineage always
	// holds the same bytes, so incremental checkpoints upload it once.
	Table bool `json:"table,omitempty"`
	// FirstKeyGroup..LastKeyGroup bound the key groups of a table's entries; both are -1
	// when unknown (the table is then treated as overlapping everything).
	FirstKeyGroup int `json:"firstKeyGroup"`
	LastKeyGroup  int `json:"lastKeyGroup"`
}

// Overlaps reports whether the file may hold entries of key groups from..to.
func (f DBFile) Overlaps(from, to int) bool {
	if !f.Table || f.FirstKeyGroup < 0 {
		return true
	}
	return f.FirstKeyGroup <= to && f.LastKeyGroup >= from
}

// Checkpoint writes a consistent copy of the database into dir (which must not exist and
// must be on the same file system as the instance: tables are hard-linked, the rest
// copied) and lists its files. It flushes the memtables first: with the write-ahead log
// off, that is what puts every write so far into the files. This is the synchronous part
// of an incremental checkpoint; the files do not change afterwards.
func (p *PebbleBackend) Checkpoint(dir string) ([]DBFile, error) {
	if p.db == nil {
		return nil, ErrClosed
	}
	if err := p.beforeDirect(false); err != nil {
		return nil, err
	}
	if err := p.db.Flush(); err != nil {
		return nil, fmt.Errorf("pebble state backend: flush before checkpoint: %w", err)
	}
	if err := p.db.Checkpoint(dir); err != nil {
		return nil, fmt.Errorf("pebble state backend: checkpoint into %s: %w", dir, err)
	}
	files, _, err := listCheckpoint(dir)
	return files, err
}

// listCheckpoint lists the files of the database checkpoint in dir, and the largest
// sequence number of its tables.
func listCheckpoint(dir string) ([]DBFile, uint64, error) {
	bounds, maxSeq, err := checkpointTableBounds(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("pebble state backend: checkpoint %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("pebble state backend: listing checkpoint %s: %w", dir, err)
	}
	var files []DBFile
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, 0, fmt.Errorf("pebble state backend: checkpoint %s: %w", dir, err)
		}
		f := DBFile{Name: e.Name(), Size: fi.Size(), Table: strings.HasSuffix(e.Name(), ".sst"), FirstKeyGroup: -1, LastKeyGroup: -1}
		if b, ok := bounds[f.Name]; ok && f.Table && b[0] >= 0 && b[1] >= 0 {
			f.FirstKeyGroup, f.LastKeyGroup = b[0], b[1]
		}
		files = append(files, f)
	}
	return files, maxSeq, nil
}

// checkpointTableBounds reads the key-group bounds of every table of the database
// checkpoint in dir, by file name, from the checkpoint's own manifest (the checkpoint
// opened read-only). The live instance's SSTables() would list its current version, which
// a compaction finishing after db.Checkpoint has already replaced: the checkpoint's tables
// would be missing from it and their bounds unknown, and a restore at another parallelism
// would then download every table instead of those of its key groups. A file backing
// several virtual tables gets the union of their bounds. maxSeq is the largest sequence
// number of any table (see PebbleBackend.CheckpointAsync).
func checkpointTableBounds(dir string) (_ map[string][2]int, maxSeq uint64, _ error) {
	cache := pebble.NewCache(1 << 20)
	defer cache.Unref()
	db, err := pebble.Open(dir, &pebble.Options{
		ReadOnly:                    true,
		DisableTableStats:           true,
		DisableAutomaticCompactions: true,
		Cache:                       cache,
		Logger:                      pebbleLogger{log: slog.Default().With("pebble", dir)},
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reopening read-only: %w", err)
	}
	levels, err := db.SSTables()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	// The read-only open locked the directory with a new LOCK file, which is no part of
	// the checkpoint.
	if rerr := os.Remove(filepath.Join(dir, "LOCK")); err == nil && rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = rerr
	}
	if err != nil {
		return nil, 0, fmt.Errorf("listing tables: %w", err)
	}
	bounds := map[string][2]int{}
	for _, lv := range levels {
		for _, t := range lv {
			maxSeq = max(maxSeq, uint64(t.LargestSeqNum))
			name := fmt.Sprintf("%s.sst", t.BackingSSTNum)
			lo, hi := keyGroupOf(t.Smallest.UserKey), keyGroupOf(t.Largest.UserKey)
			if b, ok := bounds[name]; ok {
				if b[0] < 0 || lo < 0 || b[1] < 0 || hi < 0 {
					lo, hi = -1, -1
				} else {
					lo, hi = min(lo, b[0]), max(hi, b[1])
				}
			}
			bounds[name] = [2]int{lo, hi}
		}
	}
	return bounds, maxSeq, nil
}

// keyGroupOf is the key group of a stored key (-1 if too short).
func keyGroupOf(k []byte) int {
	if len(k) < 2 {
		return -1
	}
	return int(binary.BigEndian.Uint16(k))
}

// RestoreSource is the files of one database checkpoint on local disk, by base name, and
// the key groups it holds. Files named in Placeholders are not there: a file of that
// size is created sparse in their place (tables that hold no key group the restore
// keeps, which the restore excises without reading).
type RestoreSource struct {
	Files        map[string]string // base name -> local path (hard-linked, or copied)
	Placeholders map[string]int64  // base name -> size
	// Handles names each file in the checkpoint storage (base name -> handle), where
	// names are unique and files never change: a restore finds prepared tables by it
	// (LinkableTables). Nil: none are looked for.
	Handles map[string]string
}

func (s RestoreSource) materialize(dir string) error {
	for name, src := range s.Files {
		dst := filepath.Join(dir, name)
		if !strings.HasSuffix(name, ".sst") {
			// MANIFEST and the like change in place once opened: a copy, never a link
			// into a local store's entry.
			if err := copyLocal(src, dst); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		if err := os.Link(src, dst); err != nil {
			if err := copyLocal(src, dst); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	for name, size := range s.Placeholders {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			err = f.Truncate(size)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("placeholder %s: %w", name, err)
		}
	}
	return nil
}

func copyLocal(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// OpenPebbleFromCheckpoints opens a backend for key groups from..to from database
// checkpoints: base becomes the instance (its entries outside from..to excised, its
// placeholders with them), and the entries of from..to of every other source are copied
// in. A restore at the same parallelism has only a base; a rescale merges.
func OpenPebbleFromCheckpoints(ctx context.Context, opts PebbleOptions, from, to int, base RestoreSource, others []RestoreSource) (*PebbleBackend, error) {
	if err := checkRange(from, to); err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		opts.Dir = os.TempDir()
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("pebble state backend: %w", err)
	}
	dir, lock, err := newInstanceDir(opts.Dir, opts.Name) // locked from the start: CleanStale spares it
	if err != nil {
		return nil, fmt.Errorf("pebble state backend: %w", err)
	}
	be, err := openPebbleFromCheckpointsIn(ctx, dir, opts, from, to, base, others)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	be.lock = lock
	return be, nil
}

func openPebbleFromCheckpointsIn(ctx context.Context, dir string, opts PebbleOptions, from, to int, base RestoreSource, others []RestoreSource) (*PebbleBackend, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	if err := base.materialize(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pebble state backend: restoring into %s: %w", dir, err)
	}
	linked := time.Now()
	// First open: nothing may read the placeholders (no table statistics, no
	// compactions) until the excise has dropped them.
	clip, err := openPebbleIn(dir, opts, func(po *pebble.Options) {
		po.DisableTableStats = true
		po.DisableAutomaticCompactions = true
	})
	if err != nil {
		return nil, err
	}
	if err := clip.excise(ctx, from, to); err != nil {
		_ = clip.Close()
		return nil, err
	}
	if err := clip.db.Close(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pebble state backend: %s: %w", dir, err)
	}
	for name := range base.Placeholders {
		_ = os.Remove(filepath.Join(dir, name)) // an excised table is obsolete; Pebble may have removed it already
	}
	be, err := openPebbleIn(dir, opts, nil)
	if err != nil {
		return nil, err
	}
	opened := time.Now()
	var merged int64
	for i, o := range others {
		n, err := be.ingestFrom(ctx, opts, from, to, o)
		merged += n
		if err != nil {
			_ = be.Close()
			return nil, fmt.Errorf("pebble state backend: merging restore source %d: %w", i, err)
		}
	}
	log.Info("pebble database restored", "key_groups", fmt.Sprintf("%d-%d", from, to),
		"link_ms", linked.Sub(start).Milliseconds(), "open_excise_ms", opened.Sub(linked).Milliseconds(),
		"merge_ms", time.Since(opened).Milliseconds(), "merged_sources", len(others), "merged_bytes", merged)
	return be, nil
}

// openSource materializes the restore source rs in dir and opens it read-only, reading
// nothing it need not (no table statistics, no compactions): a placeholder is a sparse
// file of zeros.
func openSource(dir string, opts PebbleOptions, rs RestoreSource) (*PebbleBackend, error) {
	if err := rs.materialize(dir); err != nil {
		return nil, err
	}
	return openPebbleIn(dir, opts, func(po *pebble.Options) {
		po.ReadOnly = true
		po.DisableTableStats = true
		po.DisableAutomaticCompactions = true
	})
}

// excise deletes every entry outside key groups from..to.
func (p *PebbleBackend) excise(ctx context.Context, from, to int) error {
	if err := p.beforeDirect(true); err != nil {
		return err
	}
	lo, hi := keyGroupBounds(from, to)
	spans := []pebble.KeyRange{}
	if from > 0 {
		spans = append(spans, pebble.KeyRange{Start: []byte{0}, End: lo})
	}
	if hi != nil {
		spans = append(spans, pebble.KeyRange{Start: hi, End: []byte{0xff, 0xff, 0xff}})
	}
	for _, s := range spans {
		if err := p.db.Excise(ctx, s); err != nil {
			return fmt.Errorf("pebble state backend: excising %x..%x: %w", s.Start, s.End, err)
		}
	}
	return nil
}

// ingestTableSize is the size at which ingestFrom starts a new table.
const ingestTableSize = 64 << 20

// ingestFrom adds the entries of key groups from..to of a database checkpoint to p and
// returns the bytes of tables it ingested. It writes them into new sstables in key order
// and ingests those: one sequential write, no memtable, no compaction (a batch per 4 MiB
// went through the memtables and every level, several times the data in writes). The
// source's own tables cannot be ingested as they are: their entries carry the sequence
// numbers of another database. Key groups of different writers never overlap, so the new
// tables go to the bottom level beside the base's.
//
// The range is cut into up to GOMAXPROCS parts of contiguous key groups, each read by an
// iterator of its own and written into tables of its own, in parallel: the copy is CPU
// work (reading, checksumming and writing blocks through the page cache), and the restore
// it belongs to is the downtime of a switch. The parts' tables do not overlap, so they
// are ingested together.
func (p *PebbleBackend) ingestFrom(ctx context.Context, opts PebbleOptions, from, to int, src RestoreSource) (int64, error) {
	tmp, err := os.MkdirTemp(opts.Dir, "tide-restore-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	srcDir := filepath.Join(tmp, "src")
	if err := os.Mkdir(srcDir, 0o700); err != nil {
		return 0, err
	}
	sdb, err := openSource(srcDir, opts, src)
	if err != nil {
		return 0, err
	}
	defer sdb.db.Close()
	if n, ok, err := p.linkFrom(ctx, opts, sdb.db, srcDir, tmp, from, to, src); ok || err != nil {
		return n, err
	}
	parts := ingestParts(from, to, runtime.GOMAXPROCS(0))
	type result struct {
		paths []string
		size  int64
		err   error
	}
	results := make([]result, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			r.paths, r.size, r.err = p.writeIngestTables(ctx, sdb.db, tmp, i, part[0], part[1])
		}()
	}
	wg.Wait()
	var paths []string
	var size int64
	for _, r := range results {
		if r.err != nil {
			return size, r.err
		}
		paths = append(paths, r.paths...)
		size += r.size
	}
	if len(paths) == 0 {
		return 0, nil
	}
	if err := p.beforeDirect(true); err != nil {
		return size, err
	}
	if err := p.db.Ingest(ctx, paths); err != nil {
		return size, fmt.Errorf("ingesting %d tables: %w", len(paths), err)
	}
	return size, nil
}

// ingestParts cuts key groups from..to into at most n contiguous parts of nearly equal
// size (none when the range is empty).
func ingestParts(from, to, n int) [][2]int {
	count := to - from + 1
	n = max(1, min(n, count))
	var out [][2]int
	for i := range n {
		lo, hi := from+i*count/n, from+(i+1)*count/n-1
		if lo <= hi {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// writeIngestTables writes the entries of key groups from..to of src into new sstables
// in dir (named after part) for ingestion, and returns their paths and bytes.
func (p *PebbleBackend) writeIngestTables(ctx context.Context, src *pebble.DB, dir string, part, from, to int) ([]string, int64, error) {
	lo, hi := keyGroupBounds(from, to)
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	po := &pebble.Options{}
	po.EnsureDefaults()
	wo := po.MakeWriterOptions(6, p.db.TableFormat()) // the bottom level: nothing will sit below them
	var paths []string
	var w *sstable.Writer
	var size int64
	finish := func() error {
		if w == nil {
			return nil
		}
		err := w.Close()
		if err == nil {
			meta, merr := w.Metadata()
			if merr == nil {
				size += int64(meta.Size)
			}
			err = merr
		}
		w = nil
		return err
	}
	defer func() { // a table left open by an error
		if w != nil {
			_ = w.Close()
		}
	}()
	for ok := it.First(); ok; ok = it.Next() {
		if w != nil && w.Raw().EstimatedSize() >= ingestTableSize {
			if err := finish(); err != nil {
				return paths, size, err
			}
			if ctx.Err() != nil {
				return paths, size, ctx.Err()
			}
		}
		if w == nil {
			name := filepath.Join(dir, fmt.Sprintf("ingest-%03d-%06d.sst", part, len(paths)))
			f, err := noSyncFS{vfs.Default}.Create(name, vfs.WriteCategoryUnspecified) // like every file of the instance: never fsynced
			if err != nil {
				return paths, size, err
			}
			w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo)
			paths = append(paths, name)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return paths, size, err
		}
		if err := w.Set(it.Key(), v); err != nil {
			return paths, size, err
		}
	}
	if err := it.Error(); err != nil {
		return paths, size, err
	}
	if err := finish(); err != nil {
		return paths, size, err
	}
	return paths, size, nil
}
