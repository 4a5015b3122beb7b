package localstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Key names one entry: files of checkpoint Checkpoint for key groups
// KeyGroupStart..KeyGroupEnd (inclusive) of a vertex of a job.
type Key struct {
	Job           string
	Vertex        string
	KeyGroupStart int
	KeyGroupEnd   int
	Checkpoint    int64
}

func (k Key) String() string {
	return fmt.Sprintf("job %s vertex %s key groups %d-%d checkpoint %d", k.Job, k.Vertex, k.KeyGroupStart, k.KeyGroupEnd, k.Checkpoint)
}

func (k Key) validate() error {
	if k.Job == "" || k.Vertex == "" {
		return fmt.Errorf("local state: %v: job and vertex must be set", k)
	}
	if k.KeyGroupStart < 0 || k.KeyGroupStart > k.KeyGroupEnd+1 || k.Checkpoint <= 0 {
		return fmt.Errorf("local state: %v: bad key-group range or checkpoint id", k)
	}
	return nil
}

// File is one file of an entry: the handle name the checkpoint's _metadata gives it and
// its size. Path is where it is on local disk (in an Entry: inside the store).
type File struct {
	Handle string `json:"handle"`
	Size   int64  `json:"size"`
	Path   string `json:"-"`
	local  string // name inside the entry directory
	sum    string // CRC-32C of the bytes, as the index records it (checksum.go)
	// checked: the bytes are known to match sum (this store wrote them, or verified them).
	checked bool
}

// Entry is a committed entry.
type Entry struct {
	Key   Key
	Dir   string
	Files []File
}

// Store is the local state directory of one TaskManager. It is safe for concurrent use.
type Store struct {
	root string
	log  *slog.Logger

	mu      sync.Mutex
	entries map[Key]*Entry
	held    map[Key]int // entries Confirm keeps (hold.go)
	lock    *os.File    // the directory's lock file, flock'ed while open (owner.go)
}

const (
	stagingDir = ".staging"
	indexName  = "index.json"
)

type index struct {
	Key   Key         `json:"key"`
	Files []indexFile `json:"files"`
}

type indexFile struct {
	Handle string `json:"handle"`
	Size   int64  `json:"size"`
	Local  string `json:"local"`
	Sum    string `json:"sum"`
}

// Open opens (creating it) the store rooted at dir, loads the committed entries and
// removes what a crashed writer left in staging. The store owns dir until Close (or the
// process ends): opening a directory another store owns fails (owner.go).
func Open(dir string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.Default()
	}
	if dir == "" {
		return nil, errors.New("local state: no directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local state %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("local state %s: %w", dir, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, stagingDir)); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("local state %s: removing staging leftovers: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, stagingDir), 0o700); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("local state %s: %w", dir, err)
	}
	s := &Store{root: dir, log: log, entries: map[Key]*Entry{}, lock: lock}
	idx, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*", indexName))
	for _, p := range idx {
		data, err := os.ReadFile(p)
		var ix index
		if err == nil {
			err = json.Unmarshal(data, &ix)
		}
		if err == nil && !ix.summed() {
			err = errors.New("written without checksums")
		}
		if err != nil || ix.Key.validate() != nil || filepath.Dir(p) != s.entryDir(ix.Key) {
			log.Warn("local state: dropping an unreadable entry", "dir", filepath.Dir(p), "err", err)
			_ = os.RemoveAll(filepath.Dir(p))
			continue
		}
		// Written by an earlier process: each file is checked against its sum on first use.
		s.entries[ix.Key] = ix.entry(filepath.Dir(p))
	}
	return s, nil
}

// Dir is the store's root.
func (s *Store) Dir() string { return s.root }

// entry is the (unchecked) entry ix describes, in dir.
func (ix index) entry(dir string) *Entry {
	e := &Entry{Key: ix.Key, Dir: dir}
	for _, f := range ix.Files {
		e.Files = append(e.Files, File{Handle: f.Handle, Size: f.Size, Path: filepath.Join(dir, f.Local), local: f.Local, sum: f.Sum})
	}
	return e
}

func (ix index) summed() bool {
	for _, f := range ix.Files {
		if f.Sum == "" {
			return false
		}
	}
	return true
}

func (s *Store) jobDir(job string) string { return filepath.Join(s.root, url.PathEscape(job)) }

func (s *Store) entryDir(k Key) string {
	return filepath.Join(s.jobDir(k.Job), url.PathEscape(k.Vertex),
		fmt.Sprintf("%d-%d", k.KeyGroupStart, k.KeyGroupEnd), "chk-"+strconv.FormatInt(k.Checkpoint, 10))
}

// Staging is an entry being written; nothing of it is visible before Commit.
type Staging struct {
	s     *Store
	key   Key
	dir   string
	files []File
	names map[string]bool
	known map[fileID]knownSum // sums the store's entries of (job, vertex) hold; nil until Link
	done  bool
}

// Stage starts an entry for k.
func (s *Store) Stage(k Key) (*Staging, error) {
	if err := k.validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Join(s.root, stagingDir), "entry-")
	if err != nil {
		return nil, fmt.Errorf("local state %v: %w", k, err)
	}
	return &Staging{s: s, key: k, dir: dir, names: map[string]bool{}}, nil
}

func (st *Staging) add(handle string) (string, error) {
	if st.done {
		return "", fmt.Errorf("local state %v: entry already committed or aborted", st.key)
	}
	if handle == "" || st.names[handle] {
		return "", fmt.Errorf("local state %v: handle %q is empty or added twice", st.key, handle)
	}
	st.names[handle] = true
	return fmt.Sprintf("f%05d-%s", len(st.files), sanitize(handle)), nil
}

func sanitize(handle string) string {
	b := filepath.Base(handle)
	b = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, b)
	if len(b) > 100 {
		b = b[len(b)-100:]
	}
	return b
}

// Create returns a writer for the bytes of handle; its size is what was written when
// the writer is closed.
func (st *Staging) Create(handle string) (io.WriteCloser, error) {
	local, err := st.add(handle)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(st.dir, local), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("local state %v: %w", st.key, err)
	}
	return &stagedFile{f: f, st: st, handle: handle, local: local, sum: newSum()}, nil
}

type stagedFile struct {
	f      *os.File
	st     *Staging
	handle string
	local  string
	n      int64
	sum    hash.Hash32
}

func (w *stagedFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	w.sum.Write(p[:n])
	return n, err
}

func (w *stagedFile) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("local state %v: %s: %w", w.st.key, w.handle, err)
	}
	w.st.files = append(w.st.files, File{Handle: w.handle, Size: w.n, local: w.local, sum: formatSum(w.sum), checked: true})
	return nil
}

// Link adds the local file at path as handle: hard-linked into the entry (copied where
// the file system refuses the link). The source must not change afterwards.
func (st *Staging) Link(handle, path string) error {
	local, err := st.add(handle)
	if err != nil {
		return err
	}
	dst := filepath.Join(st.dir, local)
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("local state %v: %s: %w", st.key, handle, err)
	}
	if err := os.Link(path, dst); err != nil {
		if err := copyFile(path, dst); err != nil {
			return fmt.Errorf("local state %v: %s: %w", st.key, handle, err)
		}
	}
	// The sum: the one an entry already records for these bytes (the name identifies
	// them), else read from the file, whose bytes this process handed over.
	if st.known == nil {
		st.known = st.s.knownSums(st.key.Job, st.key.Vertex)
	}
	f := File{Handle: handle, Size: fi.Size(), local: local}
	if k, ok := st.known[fileID{handle, fi.Size()}]; ok {
		f.sum, f.checked = k.sum, k.checked
	} else {
		sum, n, err := fileSum(dst)
		if err == nil && n != fi.Size() {
			err = fmt.Errorf("%s changed while it was added (%d bytes, then %d)", path, fi.Size(), n)
		}
		if err != nil {
			return fmt.Errorf("local state %v: %s: %w", st.key, handle, err)
		}
		f.sum, f.checked = sum, true
	}
	st.files = append(st.files, f)
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// Commit publishes the entry (replacing one with the same key).
func (st *Staging) Commit() error {
	if st.done {
		return fmt.Errorf("local state %v: entry already committed or aborted", st.key)
	}
	st.done = true
	ix := index{Key: st.key}
	for _, f := range st.files {
		ix.Files = append(ix.Files, indexFile{Handle: f.Handle, Size: f.Size, Local: f.local, Sum: f.sum})
	}
	data, err := json.Marshal(ix)
	if err == nil {
		err = os.WriteFile(filepath.Join(st.dir, indexName), data, 0o600)
	}
	if err != nil {
		_ = os.RemoveAll(st.dir)
		return fmt.Errorf("local state %v: writing the index: %w", st.key, err)
	}
	s := st.s
	dst := s.entryDir(st.key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		_ = os.RemoveAll(st.dir)
		return fmt.Errorf("local state %v: %w", st.key, err)
	}
	if _, ok := s.entries[st.key]; ok {
		delete(s.entries, st.key)
		if err := os.RemoveAll(dst); err != nil {
			_ = os.RemoveAll(st.dir)
			return fmt.Errorf("local state %v: replacing the entry: %w", st.key, err)
		}
	}
	if err := os.Rename(st.dir, dst); err != nil {
		_ = os.RemoveAll(st.dir)
		return fmt.Errorf("local state %v: %w", st.key, err)
	}
	e := &Entry{Key: st.key, Dir: dst, Files: st.files}
	for i := range e.Files {
		e.Files[i].Path = filepath.Join(dst, e.Files[i].local)
	}
	s.entries[st.key] = e
	return nil
}

// Path returns where the staged file of handle is, with its size, until the entry is
// committed or aborted: a warm-up copy whose checkpoint was subsumed mid-fetch links the
// files it already has into its next entry instead of downloading them again.
func (st *Staging) Path(handle string) (string, int64, bool) {
	if st.done {
		return "", 0, false
	}
	for _, f := range st.files {
		if f.Handle == handle {
			return filepath.Join(st.dir, f.local), f.Size, true
		}
	}
	return "", 0, false
}

// Abort drops the staged entry (a no-op after Commit).
func (st *Staging) Abort() {
	if st.done {
		return
	}
	st.done = true
	_ = os.RemoveAll(st.dir)
}

// Put adds an entry of files already on local disk (File.Path), hard-linked or copied.
func (s *Store) Put(k Key, files []File) error {
	st, err := s.Stage(k)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := st.Link(f.Handle, f.Path); err != nil {
			st.Abort()
			return err
		}
	}
	return st.Commit()
}

// Find returns the local path of handle with exactly size bytes, from any committed
// entry of (job, vertex) (the newest that holds it). A file of an entry an earlier
// process wrote is served once it matches its checksum (checksum.go); one that does
// not takes its entry with it and Find looks further.
func (s *Store) Find(job, vertex, handle string, size int64) (string, bool) {
	for {
		s.mu.Lock()
		var best *Entry
		bi := -1
		for k, e := range s.entries {
			if k.Job != job || k.Vertex != vertex {
				continue
			}
			for i, f := range e.Files {
				if f.Handle == handle && f.Size == size && (best == nil || k.Checkpoint > best.Key.Checkpoint) {
					best, bi = e, i
				}
			}
		}
		if best == nil {
			s.mu.Unlock()
			return "", false
		}
		f := best.Files[bi]
		s.mu.Unlock()
		if f.checked || s.verify(best, bi) {
			return f.Path, true
		}
	}
}

// Lookup returns the entries of checkpoint n of (job, vertex) whose key-group range
// overlaps from..to, by key-group start.
func (s *Store) Lookup(job, vertex string, n int64, from, to int) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	for k, e := range s.entries {
		if k.Job == job && k.Vertex == vertex && k.Checkpoint == n && k.KeyGroupStart <= to && k.KeyGroupEnd >= from {
			c := *e
			c.Files = slices.Clone(e.Files)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.Key.KeyGroupStart - b.Key.KeyGroupStart })
	return out
}

// Confirm records that checkpoint n of job completed: entries of older checkpoints go.
func (s *Store) Confirm(job string, n int64) {
	s.drop(func(k Key) bool { return k.Job == job && k.Checkpoint < n && s.held[k] == 0 })
}

// DropJob deletes every entry of job.
func (s *Store) DropJob(job string) {
	s.drop(func(k Key) bool { return k.Job == job })
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = os.RemoveAll(s.jobDir(job))
}

func (s *Store) drop(match func(Key) bool) {
	s.mu.Lock()
	var trash []string
	for k, e := range s.entries {
		if match(k) {
			if t, ok := s.retire(k, e); ok {
				trash = append(trash, t)
			} else {
				s.dropEntry(k, e)
			}
		}
	}
	s.mu.Unlock()
	// Outside the lock: deleting a large entry's files takes a while (0.7 s seen at
	// 1 GiB under load), and every Find of a restore waits for the lock.
	for _, t := range trash {
		if err := os.RemoveAll(t); err != nil {
			s.log.Warn("local state: removing a dropped entry", "dir", t, "err", err)
		}
	}
}

// retire takes entry e of key k out of the store by moving its directory into the
// staging area (a rename: at once), and returns where it went; the caller holds s.mu
// and deletes it later. false: the rename failed and nothing changed.
func (s *Store) retire(k Key, e *Entry) (string, bool) {
	t, err := os.MkdirTemp(filepath.Join(s.root, stagingDir), "dropped-")
	if err != nil {
		return "", false
	}
	if err := os.Rename(e.Dir, t); err != nil { // onto the empty directory just made
		_ = os.Remove(t)
		return "", false
	}
	delete(s.entries, k)
	// Empty parents (range, vertex) go too; errors mean they are not empty.
	_ = os.Remove(filepath.Dir(e.Dir))
	_ = os.Remove(filepath.Dir(filepath.Dir(e.Dir)))
	return t, true
}

// dropEntry deletes entry e of key k; the caller holds s.mu.
func (s *Store) dropEntry(k Key, e *Entry) {
	delete(s.entries, k)
	if err := os.RemoveAll(e.Dir); err != nil {
		s.log.Warn("local state: removing an entry", "entry", k.String(), "err", err)
	}
	// Empty parents (range, vertex) go too; errors mean they are not empty.
	_ = os.Remove(filepath.Dir(e.Dir))
	_ = os.Remove(filepath.Dir(filepath.Dir(e.Dir)))
}

// Size is the number of bytes of the committed entries (hard links counted once per entry).
func (s *Store) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, e := range s.entries {
		for _, f := range e.Files {
			n += f.Size
		}
	}
	return n
}
