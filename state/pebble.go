package state

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// PebbleOptions configure a pebble backend.
type PebbleOptions struct {
	// Dir is the parent directory; the instance gets a fresh subdirectory that Close removes.
	Dir string
	// Name prefixes the subdirectory's name (e.g. the vertex and subtask), for operators.
	Name string
	// CacheSize is the block cache in bytes (0: Pebble's default, 8 MiB).
	CacheSize int64
	// MemTableSize is the memtable size in bytes (0: Pebble's default, 4 MiB).
	MemTableSize uint64
	// Memory is the TaskManager's managed memory; when set it replaces CacheSize and
	// MemTableSize (the instance shares the TaskManager's cache and file cache).
	Memory *Memory
	Logger *slog.Logger
	// Linkable holds prepared copies of restore sources' tables (nil: none): a merging
	// restore links those instead of rewriting their entries.
	Linkable *LinkableTables
}

// PebbleBackend keeps keyed state in an embedded Pebble LSM.
type PebbleBackend struct {
	db   *pebble.DB
	dir  string
	lock *os.File // flock'ed from the directory's creation until Close (CleanStale spares it)
	kbuf []byte
	wo   *pebble.WriteOptions
	buf  writeBuffer
	// pending counts the checkpoints CheckpointAsync is still taking.
	pending sync.WaitGroup
	sched   *gatedScheduler
}

// comparerName and the format version are persisted by Pebble and checked on open; they
// are fixed here so every instance tide writes opens with the same settings.
const pebbleFormat = pebble.FormatVirtualSSTables

// OpenPebble creates a pebble backend in a fresh directory under opts.Dir.
func OpenPebble(opts PebbleOptions) (*PebbleBackend, error) {
	if opts.Dir == "" {
		opts.Dir = os.TempDir()
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("pebble state backend: %w", err)
	}
	dir, lock, err := newInstanceDir(opts.Dir, opts.Name)
	if err != nil {
		return nil, fmt.Errorf("pebble state backend: %w", err)
	}
	be, err := openPebbleIn(dir, opts, nil)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	be.lock = lock
	return be, nil
}

// openPebbleIn opens the instance in dir (removed on failure); tune adjusts the options.
func openPebbleIn(dir string, opts PebbleOptions, tune func(*pebble.Options)) (*PebbleBackend, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	po := &pebble.Options{
		DisableWAL:         true,
		FormatMajorVersion: pebbleFormat,
		FS:                 noSyncFS{vfs.Default},
		Logger:             pebbleLogger{log: log.With("pebble", dir)},
	}
	if opts.MemTableSize > 0 {
		po.MemTableSize = opts.MemTableSize
	}
	setFilters(po)
	if tune != nil {
		tune(po)
	}
	var cache *pebble.Cache
	if opts.Memory != nil {
		opts.Memory.apply(po)
	} else if opts.CacheSize > 0 {
		cache = pebble.NewCache(opts.CacheSize)
		po.Cache = cache
	}
	sched := newGatedScheduler()
	po.Experimental.CompactionScheduler = sched
	db, err := pebble.Open(dir, po)
	if cache != nil {
		cache.Unref()
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pebble state backend: opening %s: %w", dir, err)
	}
	sched.openGate()
	return &PebbleBackend{db: db, dir: dir, wo: pebble.NoSync, sched: sched, buf: writeBuffer{limit: writeBufferEntries}}, nil
}

// setFilters gives every level's tables a bloom filter (10 bits per key, about 1% false
// positives): a Get of keyed state reads the filter block of each table whose key range
// holds the key (every L0 sublevel and one table per level) and skips the tables that do
// not have it instead of searching their index and data blocks. Keyed state reads are
// point lookups of keys that live in one table, so without filters most of a Get's work
// was spent in tables that did not hold the key.
func setFilters(po *pebble.Options) {
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
}

// Type is Pebble.
func (p *PebbleBackend) Type() Type { return Pebble }

// Dir is the instance's directory.
func (p *PebbleBackend) Dir() string { return p.dir }

// Get returns a copy of the value.
func (p *PebbleBackend) Get(kg int, state string, key []byte) ([]byte, bool, error) {
	if p.db == nil {
		return nil, false, ErrClosed
	}
	p.kbuf = AppendKey(p.kbuf[:0], kg, state, key)
	return p.bufferGet(p.kbuf)
}

func pebbleGet(r interface {
	Get([]byte) ([]byte, io.Closer, error)
}, k []byte) ([]byte, bool, error) {
	v, c, err := r.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble state backend: get: %w", err)
	}
	out := append([]byte(nil), v...)
	return out, true, c.Close()
}

// Put writes the entry.
func (p *PebbleBackend) Put(kg int, state string, key, value []byte) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	p.kbuf = AppendKey(p.kbuf[:0], kg, state, key)
	return p.bufferPut(p.kbuf, value, false)
}

// Delete removes the entry.
func (p *PebbleBackend) Delete(kg int, state string, key []byte) error {
	if p.db == nil {
		return ErrClosed
	}
	p.kbuf = AppendKey(p.kbuf[:0], kg, state, key)
	return p.bufferPut(p.kbuf, nil, true)
}

// Iterate visits one state's entries of key groups from..to in key order.
func (p *PebbleBackend) Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := p.beforeDirect(false); err != nil {
		return err
	}
	return pebbleIterate(p.db, state, from, to, fn)
}

// IterateRange visits every entry of key groups from..to in key order.
func (p *PebbleBackend) IterateRange(from, to int, fn Entry) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := p.beforeDirect(false); err != nil {
		return err
	}
	return pebbleIterateRange(p.db, from, to, fn)
}

// View takes a Pebble snapshot: later writes do not show in it.
func (p *PebbleBackend) View() (View, error) {
	if p.db == nil {
		return nil, ErrClosed
	}
	if err := p.beforeDirect(false); err != nil {
		return nil, err
	}
	return &pebbleView{s: p.db.NewSnapshot()}, nil
}

// Retire says the instance's state will be thrown away (its subtask was cancelled: a
// rescale's switch or a failover): no compaction starts from now on; those running finish
// and Close waits for them. Its subtask's successor restores on the same TaskManager at
// the same moment, and compactions of state nobody reads again only slow that restore
// down (at 1 GiB a cancelled instance's close, with the compactions its last flush
// triggered, took seconds next to the restore). Safe from any goroutine.
func (p *PebbleBackend) Retire() {
	if p.sched != nil {
		p.sched.closeGate()
	}
}

// Close closes the instance and removes its directory.
func (p *PebbleBackend) Close() error {
	if p.db == nil {
		return nil
	}
	p.pending.Wait()
	err := p.closeReader() // the buffered writes go with the instance
	err = errors.Join(err, p.db.Close())
	p.db = nil
	if rerr := os.RemoveAll(p.dir); err == nil && rerr != nil {
		err = fmt.Errorf("pebble state backend: removing %s: %w", p.dir, rerr)
	}
	if p.lock != nil {
		_ = p.lock.Close() // after the removal: CleanStale must not race it
	}
	return err
}

type iterSource interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

func pebbleIterate(src iterSource, state string, from, to int, fn func(kg int, key, value []byte) error) error {
	if err := checkRange(from, to); err != nil {
		return err
	}
	var prefix []byte
	for kg := from; kg <= to; kg++ {
		prefix = appendPrefix(prefix[:0], kg, state)
		n := len(prefix)
		err := scan(src, prefix, prefixEnd(prefix), func(k, v []byte) error {
			return fn(kg, k[n:], v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func pebbleIterateRange(src iterSource, from, to int, fn Entry) error {
	if err := checkRange(from, to); err != nil {
		return err
	}
	lo, hi := keyGroupBounds(from, to)
	return scan(src, lo, hi, func(k, v []byte) error {
		kg, s, key, err := SplitKey(k)
		if err != nil {
			return err
		}
		return fn(kg, s, key, v)
	})
}

func scan(src iterSource, lo, hi []byte, fn func(k, v []byte) error) error {
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("pebble state backend: iterator: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key(), v)
		}
		if err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebble state backend: iterating: %w", err)
	}
	return nil
}

type pebbleView struct {
	s    *pebble.Snapshot
	kbuf []byte
}

func (v *pebbleView) Get(kg int, state string, key []byte) ([]byte, bool, error) {
	if v.s == nil {
		return nil, false, ErrClosed
	}
	v.kbuf = AppendKey(v.kbuf[:0], kg, state, key)
	return pebbleGet(v.s, v.kbuf)
}

func (v *pebbleView) Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error {
	if v.s == nil {
		return ErrClosed
	}
	return pebbleIterate(v.s, state, from, to, fn)
}

func (v *pebbleView) IterateRange(from, to int, fn Entry) error {
	if v.s == nil {
		return ErrClosed
	}
	return pebbleIterateRange(v.s, from, to, fn)
}

func (v *pebbleView) Close() error {
	if v.s == nil {
		return nil
	}
	err := v.s.Close()
	v.s = nil
	return err
}

// pebbleLogger sends Pebble's messages to slog instead of stderr.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any)  { l.log.Debug(fmt.Sprintf(format, args...)) }
func (l pebbleLogger) Errorf(format string, args ...any) { l.log.Error(fmt.Sprintf(format, args...)) }
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...))
	panic(fmt.Sprintf(format, args...))
}
