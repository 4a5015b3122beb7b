package exec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/localstate"
)

// Incremental checkpoints (execution.checkpointing.incremental, pebble backend).
//
// At the barrier the subtask seals its Pebble instance's memtable; in the background the
// memtable is flushed and a Pebble checkpoint taken (tables hard-linked into a directory
// of their own, MANIFEST and OPTIONS copied; see state.PebbleBackend.CheckpointAsync):
// that directory is the immutable view the upload reads. Then it uploads
//
//   - each table (*.sst) that no confirmed checkpoint of this instance uploaded yet, to
//     <job>/shared/<vertex>-<subtask>-<instance>-c<checkpoint>-<table> (Flink's shared/
//     beside chk-<n>/); the tables of the last confirmed checkpoint are listed again
//     under the names they already have, not uploaded;
//   - the other database files (MANIFEST, OPTIONS, markers) to chk-<n>/<vertex>-<subtask>.db-<file>;
//   - the state outside the backend as the usual chk-<n>/<vertex>-<subtask>.state;
//   - last, chk-<n>/<vertex>-<subtask>.kg<first>-<last>.pebble: the database's manifest, listing every file
//     with its handle name, size and the key groups a table holds.
//
// The acknowledgement lists all of those handles, so the checkpoint's _metadata names
// every file it uses and the AM reference-counts the shared ones (am/checkpoint_shared.go).
// "Confirmed" means the AM announced the checkpoint complete: a table uploaded by a
// checkpoint that never completed is never referenced again (the AM collects it as an
// orphan), and the checkpoint id in a shared name tells the AM which checkpoint uploaded it.

// dbManifestSuffix ends the name of a subtask's database manifest in a checkpoint.
const dbManifestSuffix = ".pebble"

// manifestSuffix names the manifest of a subtask owning key groups start..end: the range
// is in the name so that a restore skips the manifests of writers that cannot overlap it
// without reading them (with local recovery, reading one would be a download).
func manifestSuffix(start, end int) string {
	return fmt.Sprintf(".kg%d-%d%s", start, end, dbManifestSuffix)
}

// manifestKeyGroups reads the key-group range from a manifest's name; ok is false for a
// name without one, whose manifest must be read to know its range.
func manifestKeyGroups(name string) (start, end int, ok bool) {
	base := strings.TrimSuffix(name, dbManifestSuffix)
	i := strings.LastIndex(base, ".kg")
	if i < 0 {
		return 0, 0, false
	}
	a, b, found := strings.Cut(base[i+len(".kg"):], "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || start < 0 || end < start-1 {
		return 0, 0, false
	}
	return start, end, true
}

// dbManifest describes one subtask's Pebble database in a checkpoint.
type dbManifest struct {
	Vertex        string         `json:"vertex"`
	Subtask       int            `json:"subtask"`
	KeyGroupStart int            `json:"keyGroupStart"`
	KeyGroupEnd   int            `json:"keyGroupEnd"`
	Files         []manifestFile `json:"files"`
}

type manifestFile struct {
	state.DBFile
	Handle string `json:"handle"`
}

// incrementalState is what a subtask remembers of its tables in checkpoint storage.
type incrementalState struct {
	uid string
	mu  sync.Mutex
	// confirmed maps table names of the instance to the handles of the last confirmed
	// checkpoint (or of the checkpoint the instance was restored from).
	confirmed map[string]StateHandle
	// uploaded holds the tables of checkpoints uploaded but not yet confirmed.
	uploaded map[int64]map[string]StateHandle
}

func newIncrementalState() *incrementalState {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &incrementalState{uid: hex.EncodeToString(b[:]), confirmed: map[string]StateHandle{}, uploaded: map[int64]map[string]StateHandle{}}
}

// confirm makes checkpoint id's tables the ones later checkpoints reuse.
func (s *incrementalState) confirm(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if up, ok := s.uploaded[id]; ok {
		s.confirmed = up
	}
	for n := range s.uploaded {
		if n <= id {
			delete(s.uploaded, n)
		}
	}
}

func (s *incrementalState) reusable() map[string]StateHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]StateHandle, len(s.confirmed))
	for k, v := range s.confirmed {
		out[k] = v
	}
	return out
}

func (s *incrementalState) record(id int64, tables map[string]StateHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploaded[id] = tables
}

// incrementalSnapshot is the synchronous part's result: a Pebble checkpoint directory,
// being taken in the background (state.PebbleBackend.CheckpointAsync: the barrier only
// seals the memtable) until files returns.
type incrementalSnapshot struct {
	dir     string // the Pebble checkpoint, inside the scratch directory root
	root    string
	lock    *os.File // root's lock (checkpoint_scratch.go)
	pending *state.PendingCheckpoint
}

func (s *incrementalSnapshot) files() ([]state.DBFile, error) { return s.pending.Wait() }

func (s *incrementalSnapshot) release() {
	_, _ = s.pending.Wait()
	removeScratchDir(s.root, s.lock)
}

func (t *task) incrementalEnabled() bool {
	_, ok := t.backend.(*state.PebbleBackend)
	return ok && t.e.cfg.StateBackend.Incremental
}

func (t *task) scratchDir() string {
	if d := t.e.cfg.StateBackend.Dir; d != "" {
		return d
	}
	return os.TempDir()
}

// takeIncremental is the synchronous part of an incremental checkpoint.
func (t *task) takeIncremental(id int64) (*incrementalSnapshot, error) {
	pb := t.backend.(*state.PebbleBackend)
	if t.incr == nil {
		t.incr = newIncrementalState()
	}
	root, lock, err := newScratchDir(t.scratchDir(), fmt.Sprintf("%s-%d-%d-%d-", t.vertex.ID, t.index, t.a.id, id))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: scratch directory: %w", id, err)
	}
	dir := filepath.Join(root, "db")
	pending, err := pb.CheckpointAsync(dir)
	if err != nil {
		removeScratchDir(root, lock)
		return nil, err
	}
	return &incrementalSnapshot{dir: dir, root: root, lock: lock, pending: pending}, nil
}

func (t *task) sharedName(id int64, table string) string {
	return fmt.Sprintf("%s/shared/%s-%d-%s-c%d-%s", t.e.cfg.JobID, t.vertex.ID, t.index, t.incr.uid, id, table)
}

func (t *task) privateName(id int64, suffix string) string {
	return CheckpointDir(t.e.cfg.JobID, id) + "/" + fmt.Sprintf("%s-%d", t.vertex.ID, t.index) + suffix
}

// uploadIncremental is the background part: new tables, the private files, the state
// file and the manifest; with local recovery the files also go to the local store.
func (t *task) uploadIncremental(ctx context.Context, u *upload) ([]StateHandle, error) {
	snap := u.incr
	files, err := snap.files()
	if err != nil {
		return nil, err
	}
	reuse := t.incr.reusable()
	man := dbManifest{Vertex: t.vertex.ID, Subtask: t.index, KeyGroupStart: t.kgStart, KeyGroupEnd: t.kgEnd}
	var handles, dbHandles []StateHandle
	tables := map[string]StateHandle{}
	var local []localstate.File
	var uploaded, reused int64
	for _, f := range files {
		src := filepath.Join(snap.dir, f.Name)
		var h StateHandle
		if old, ok := reuse[f.Name]; ok && f.Table && old.Size == f.Size {
			h = old
			reused += f.Size
		} else {
			name := t.privateName(u.id, ".db-"+f.Name)
			if f.Table {
				name = t.sharedName(u.id, f.Name)
			}
			if err := uploadLocalFile(ctx, t.e.cfg.Storage, src, name); err != nil {
				return nil, err
			}
			h = StateHandle{Name: name, Size: f.Size}
			uploaded += f.Size
		}
		if f.Table {
			tables[f.Name] = h
		}
		man.Files = append(man.Files, manifestFile{DBFile: f, Handle: h.Name})
		dbHandles = append(dbHandles, h)
		local = append(local, localstate.File{Handle: h.Name, Size: h.Size, Path: src})
	}
	// The state outside the backend.
	stateName := CheckpointDir(t.e.cfg.JobID, u.id) + "/" + StateFileName(t.vertex.ID, t.index)
	sh, localState, err := t.writeTee(ctx, t.e.cfg.Storage, stateName, snap.dir, func(w io.Writer) (int64, error) { return u.w.EncodeTo(w, u.header, nil) })
	if err != nil {
		return nil, err
	}
	handles = append(handles, sh)
	if localState != "" {
		local = append(local, localstate.File{Handle: sh.Name, Size: sh.Size, Path: localState})
	}
	mdata, err := json.Marshal(man)
	if err != nil {
		return nil, fmt.Errorf("encoding the database manifest: %w", err)
	}
	mh, localMan, err := t.writeTee(ctx, t.e.cfg.Storage, t.privateName(u.id, manifestSuffix(t.kgStart, t.kgEnd)), snap.dir, func(w io.Writer) (int64, error) {
		n, err := w.Write(mdata)
		return int64(n), err
	})
	if err != nil {
		return nil, err
	}
	handles = append(handles, mh)
	handles = append(handles, dbHandles...)
	if localMan != "" {
		local = append(local, localstate.File{Handle: mh.Name, Size: mh.Size, Path: localMan})
	}
	t.incr.record(u.id, tables)
	t.metrics.uploadedBytes.Store(uploaded + sh.Size + mh.Size)
	t.log.Debug("incremental checkpoint uploaded", "checkpoint", u.id, "tables_uploaded_bytes", uploaded, "tables_reused_bytes", reused)
	t.putLocal(u.id, local)
	return handles, nil
}

// writeTee writes a file to st and, with local recovery and a dir, the same bytes
// to a local file in dir (returned) for the local store.
func (t *task) writeTee(ctx context.Context, st storage.Storage, name, dir string, write func(io.Writer) (int64, error)) (StateHandle, string, error) {
	fw, err := st.Create(ctx, name)
	if err != nil {
		return StateHandle{}, "", fmt.Errorf("creating %s: %w", name, err)
	}
	var out io.Writer = fw
	var lf *os.File
	if t.localState() != nil && dir != "" {
		if lf, err = os.CreateTemp(dir, "local-*"); err == nil {
			out = io.MultiWriter(fw, lf)
		}
	}
	n, err := write(out)
	if lf != nil {
		if cerr := lf.Close(); err == nil && cerr != nil {
			lf = nil // no local copy, the checkpoint goes on
		}
	}
	if err != nil {
		_ = fw.Abort(ctx)
		return StateHandle{}, "", fmt.Errorf("writing %s: %w", name, err)
	}
	if err := fw.Commit(ctx); err != nil {
		return StateHandle{}, "", fmt.Errorf("committing %s: %w", name, err)
	}
	localPath := ""
	if lf != nil {
		localPath = lf.Name()
	}
	return StateHandle{Name: name, Size: n}, localPath, nil
}

// uploadLocalFile copies a local file into checkpoint storage under name.
func uploadLocalFile(ctx context.Context, st storage.Storage, src, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("uploading %s: %w", name, err)
	}
	defer in.Close()
	w, err := st.Create(ctx, name)
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	if _, err := io.Copy(w, in); err != nil {
		_ = w.Abort(ctx)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Commit(ctx); err != nil {
		return fmt.Errorf("committing %s: %w", name, err)
	}
	return nil
}

// readManifest reads a subtask's database manifest listed in _metadata.
func (t *task) readManifest(ctx context.Context, src restoreSource, meta checkpoint.Metadata, h checkpoint.StateHandle, fetch *restoreFetch) (dbManifest, error) {
	dir, err := os.MkdirTemp(t.scratchDir(), "tide-restore-")
	if err != nil {
		return dbManifest{}, err
	}
	defer os.RemoveAll(dir)
	p, err := t.fetchFile(ctx, src.st, src.resolve(meta, h.Name), h.Name, h.Size, dir, fetch)
	if err != nil {
		return dbManifest{}, fmt.Errorf("restoring checkpoint %d: %w", meta.CheckpointID, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return dbManifest{}, fmt.Errorf("restoring checkpoint %d: %w", meta.CheckpointID, err)
	}
	var man dbManifest
	if err := json.Unmarshal(data, &man); err != nil {
		return dbManifest{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s: %w", meta.CheckpointID, h.Name, err)}
	}
	if man.Vertex != t.vertex.ID || man.KeyGroupStart < 0 || man.KeyGroupStart > man.KeyGroupEnd+1 || man.KeyGroupEnd >= t.maxP {
		return dbManifest{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s describes vertex %q key groups %d-%d, not a part of vertex %q with maxParallelism %d",
			meta.CheckpointID, h.Name, man.Vertex, man.KeyGroupStart, man.KeyGroupEnd, t.vertex.ID, t.maxP)}
	}
	return man, nil
}

// restoreDB rebuilds the subtask's Pebble instance from the database files of the
// subtasks whose key groups overlap its own: one becomes the instance (what falls outside
// the subtask's key groups excised; its tables holding none of them are never fetched),
// the others' entries in range are linked or copied in. Tables come
// from the local state store where it has them.
func (t *task) restoreDB(ctx context.Context, src restoreSource, meta checkpoint.Metadata, dbs []dbManifest, fetch *restoreFetch) error {
	n := meta.CheckpointID
	if t.e.cfg.StateBackend.Type != state.Pebble || !t.keyedInput() {
		return unrecoverable{fmt.Errorf("restoring checkpoint %d: it holds vertex %s's keyed state as pebble database files (the pebble backend's NATIVE format: an incremental checkpoint, or a savepoint taken with formatType NATIVE), which only state.backend.type pebble restores; to switch backends, take a savepoint in CANONICAL format (the default: tide savepoint without --formatType NATIVE) and start from that", n, t.vertex.ID)}
	}
	overlap := func(m dbManifest) int {
		return max(0, min(m.KeyGroupEnd, t.kgEnd)-max(m.KeyGroupStart, t.kgStart)+1)
	}
	var use []dbManifest
	for _, m := range dbs {
		if overlap(m) > 0 {
			use = append(use, m)
		}
	}
	if len(use) == 0 {
		return nil
	}
	// The base is excised, never rewritten; the others are merged into it, which links
	// what a local copy prepared (prepared_restore.go) and rewrites the rest. So the base
	// is a source nothing was prepared for (this TaskManager's own last state, beside a
	// standby copy of the lost range), then the one overlapping most.
	lt := t.e.preparedTables()
	prepared := func(m dbManifest) bool {
		for _, f := range m.Files {
			if f.Table && lt.Prepared(f.Handle) {
				return true
			}
		}
		return false
	}
	better := func(a, b dbManifest) bool {
		if pa, pb := prepared(a), prepared(b); pa != pb {
			return !pa
		}
		return overlap(a) > overlap(b)
	}
	best := 0
	for i, m := range use {
		if better(m, use[best]) {
			best = i
		}
	}
	use[0], use[best] = use[best], use[0]
	dir, err := os.MkdirTemp(t.scratchDir(), "tide-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var sources []state.RestoreSource
	skipped := 0
	start := time.Now()
	for _, m := range use {
		rs := state.RestoreSource{Files: map[string]string{}, Placeholders: map[string]int64{}, Handles: map[string]string{}}
		for _, f := range m.Files {
			if f.Table && !f.Overlaps(t.kgStart, t.kgEnd) {
				rs.Placeholders[f.Name] = f.Size
				skipped++
				continue
			}
			p, err := t.fetchFile(ctx, src.st, src.resolve(meta, f.Handle), f.Handle, f.Size, dir, fetch)
			if err != nil {
				return fmt.Errorf("restoring checkpoint %d: %w", n, err)
			}
			rs.Files[f.Name] = p
			rs.Handles[f.Name] = f.Handle
		}
		sources = append(sources, rs)
	}
	fetched := time.Now()
	be, err := state.OpenPebbleFromCheckpoints(ctx, t.pebbleOptions(), t.kgStart, t.kgEnd, sources[0], sources[1:])
	if err != nil {
		return fmt.Errorf("restoring checkpoint %d: %w", n, err)
	}
	t.restoredDB = be
	if src.own && len(use) == 1 && use[0].KeyGroupStart == t.kgStart && use[0].KeyGroupEnd == t.kgEnd {
		// The base's tables are in the job's checkpoint storage under these names: the
		// next incremental checkpoint lists them again instead of uploading them. Only
		// for the same key groups: after a rescale two subtasks may restore from one
		// base, and a checkpoint's _metadata lists each file under one subtask; their
		// first checkpoint uploads their tables anew.
		t.incr = newIncrementalState()
		for _, f := range use[0].Files {
			if f.Table {
				t.incr.confirmed[f.Name] = StateHandle{Name: f.Handle, Size: f.Size}
			}
		}
	}
	t.log.Info("restored the pebble database", "checkpoint", n, "sources", len(use), "tables_skipped", skipped,
		"fetch_ms", fetched.Sub(start).Milliseconds(), "open_ms", time.Since(fetched).Milliseconds())
	return nil
}
