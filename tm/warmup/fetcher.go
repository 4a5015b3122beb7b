// Package warmup is the TaskManager side of warm-up and standby copies (issue 14,
// KIP-441): it copies key-group ranges of a job's completed checkpoints from the
// checkpoint storage into the TaskManager's local state (tm/localstate) while the job
// runs elsewhere, follows every newer checkpoint the AM names, and reports each applied
// checkpoint. A restore here then finds the files locally (localstate.Find by handle name
// and size) instead of downloading them.
//
// A copy holds the state files, as the checkpoint's _metadata lists them, of the subtasks
// whose key groups overlap the range (all of the vertex's when the AM does not know who
// wrote which range). A file a local entry already holds with the same name and size (a
// shared file of an incremental checkpoint, an earlier copy) is linked, not downloaded:
// following a newer checkpoint fetches only what changed.
//
// A copy slower than the checkpoint interval is not helped by the AM retaining the
// checkpoint it reads (Flink keeps a checkpoint a restore reads): a standby follows for
// the life of the job, and a retained checkpoint would keep the files of every
// checkpoint it lags behind in the storage. Instead what a fetch got is kept when its
// checkpoint is subsumed, and the copy continues with the newest one downloading only
// what it lacks: it gets there as long as it downloads faster than the state changes,
// which a retained checkpoint would not change either.
package warmup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/localstate"
)

// Source is the key-group range subtask Subtask owned in the attempt that wrote a
// checkpoint.
type Source struct {
	Subtask    int
	Start, End int
}

// Range is one range to copy.
type Range struct {
	Vertex     string
	Start, End int
	// SourceAttempt and Sources: the ranges of the writing attempt's subtasks (nil: fetch
	// every file of the vertex).
	SourceAttempt int64
	Sources       []Source
}

// Request is one round's ranges on this TaskManager as of a completed checkpoint.
type Request struct {
	Round      int64
	Kind       string
	Checkpoint int64
	Ranges     []Range
}

// Progress is one report to the AM: the range holds Checkpoint (Bytes downloaded for
// it so far), or Err.
type Progress struct {
	Round      int64
	Vertex     string
	Start, End int
	Checkpoint int64
	Bytes      int64
	Err        error
}

// Config configures a Fetcher.
type Config struct {
	JobID   string
	Storage storage.Storage   // the job's checkpoint storage
	Local   *localstate.Store // nil: every copy fails (nothing would restore from it)
	Report  func(Progress)
	Logger  *slog.Logger
	// Prepare, if set, readies a copy that holds checkpoint meta for a fast restore
	// (tm/exec: Executor.PrepareRestore) once the AM knows the copy holds it; an error
	// costs only that speed.
	Prepare func(ctx context.Context, meta checkpoint.Metadata, vertex string, start, end int) error
}

// Fetcher runs the copies of one TaskManager for one job. It is safe for concurrent use.
type Fetcher struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	copies map[copyKey]*copyState
}

type copyKey struct {
	round      int64
	vertex     string
	start, end int
}

// copyState is one range's copy: the newest checkpoint wanted, and a signal to its
// goroutine.
type copyState struct {
	rng    Range
	want   int64
	wake   chan struct{}
	cancel context.CancelFunc
}

// New returns a Fetcher; Close stops it.
func New(cfg Config) *Fetcher {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Fetcher{cfg: cfg, ctx: ctx, cancel: cancel, copies: map[copyKey]*copyState{}}
}

// Request starts the round's copies, or moves those already running to the newer
// checkpoint. A round's copies that the request no longer lists are stopped.
func (f *Fetcher) Request(req Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	listed := map[copyKey]bool{}
	for _, r := range req.Ranges {
		k := copyKey{req.Round, r.Vertex, r.Start, r.End}
		listed[k] = true
		c, ok := f.copies[k]
		if !ok {
			ctx, cancel := context.WithCancel(f.ctx)
			c = &copyState{rng: r, wake: make(chan struct{}, 1), cancel: cancel}
			f.copies[k] = c
			f.wg.Add(1)
			go f.run(ctx, req.Round, c)
		}
		c.rng = r
		if req.Checkpoint > c.want {
			c.want = req.Checkpoint
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
	}
	for k, c := range f.copies {
		if k.round == req.Round && !listed[k] {
			c.cancel()
			delete(f.copies, k)
		}
	}
}

// Stop ends a round's copies; what they copied stays in the local state.
func (f *Fetcher) Stop(round int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, c := range f.copies {
		if k.round == round {
			c.cancel()
			delete(f.copies, k)
		}
	}
}

// Close stops every copy and waits for them.
func (f *Fetcher) Close() {
	f.cancel()
	f.wg.Wait()
}

// next returns the checkpoint the copy should hold (under the lock: Request updates it).
func (f *Fetcher) next(c *copyState) (int64, Range) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.want, c.rng
}

// run keeps one copy at the newest checkpoint asked for until its round stops. It holds
// the local entry of the last checkpoint it completed (localstate.Hold) until the next one
// is complete, so that the next fetch links the files they share instead of downloading
// them again. A fetch that does not complete (its checkpoint subsumed and its files
// deleted mid-fetch, a newer checkpoint asked for, a failed download) leaves what it
// staged to the next one (carry), which links those files instead of downloading them
// again: a range whose download takes longer than the checkpoint interval still gets
// there, downloading each file once, instead of starting from scratch at every newer
// checkpoint (issue 14: 376 retries of a 1 GiB standby on HDFS, none complete).
func (f *Fetcher) run(ctx context.Context, round int64, c *copyState) {
	defer f.wg.Done()
	var have, bytes int64
	var held *localstate.Key
	var carry *partial
	defer func() {
		carry.drop()
		if held != nil {
			f.cfg.Local.Release(*held)
		}
	}()
	for {
		want, r := f.next(c)
		if want > have {
			n, rest, meta, err := f.fetch(ctx, c, r, want, carry)
			carry = rest
			bytes += n
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errSuperseded) {
				f.cfg.Logger.Debug("warm-up copy moves on to a newer checkpoint", "round", round, "vertex", r.Vertex,
					"key_groups", fmt.Sprintf("%d-%d", r.Start, r.End), "checkpoint", want, "staged_files", carry.files())
				continue
			}
			if errors.Is(err, storage.ErrNotFound) {
				// A newer checkpoint completing deletes the older one's own files (its
				// manifests), possibly while this copy reads them: the AM's request to
				// follow the newer one is then on its way. Follow it instead of failing
				// the copy (a failed copy moves its range cold), keeping what was
				// fetched; report only if none comes.
				f.cfg.Logger.Info("warm-up copy: a file of the checkpoint is gone (subsumed?); waiting for a newer one",
					"round", round, "vertex", r.Vertex, "key_groups", fmt.Sprintf("%d-%d", r.Start, r.End), "checkpoint", want,
					"staged_files", carry.files(), "err", err)
				if f.newerAsked(ctx, c, want) {
					continue
				}
				if ctx.Err() != nil {
					return
				}
			}
			if err != nil {
				f.cfg.Logger.Warn("warm-up copy failed", "round", round, "vertex", r.Vertex,
					"key_groups", fmt.Sprintf("%d-%d", r.Start, r.End), "checkpoint", want, "err", err)
			} else {
				have = want
				k := localstate.Key{Job: f.cfg.JobID, Vertex: r.Vertex, KeyGroupStart: r.Start, KeyGroupEnd: r.End, Checkpoint: want}
				f.cfg.Local.Hold(k)
				if held != nil {
					f.cfg.Local.Release(*held)
				}
				held = &k
				f.cfg.Logger.Info("warm-up copy holds checkpoint", "round", round, "vertex", r.Vertex,
					"key_groups", fmt.Sprintf("%d-%d", r.Start, r.End), "checkpoint", want, "bytes", bytes)
			}
			if err == nil && f.cfg.Prepare != nil {
				// Before the report: a copy counts as caught up once a restore from it
				// is fast, so that a switch (or the standby lag gauge) waits for it.
				if perr := f.cfg.Prepare(ctx, meta, r.Vertex, r.Start, r.End); perr != nil {
					if ctx.Err() != nil {
						return
					}
					f.cfg.Logger.Warn("warm-up copy: preparing it for a fast restore failed; a restore from it merges more slowly",
						"round", round, "vertex", r.Vertex, "key_groups", fmt.Sprintf("%d-%d", r.Start, r.End), "checkpoint", want, "err", perr)
				}
			}
			f.cfg.Report(Progress{Round: round, Vertex: r.Vertex, Start: r.Start, End: r.End, Checkpoint: have, Bytes: bytes, Err: err})
			if err != nil {
				have = want // wait for a newer checkpoint before trying again
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
	}
}

// errSuperseded ends a fetch when a newer checkpoint is asked for before it completes:
// the copy continues with the newer one (whose files the older one's deletion spares).
var errSuperseded = errors.New("a newer checkpoint was asked for")

// partial is what a fetch that did not complete staged: the files it holds complete, by
// handle name and size. The next fetch links them from here; once that one has its own
// stage, this one is aborted (the links stay).
type partial struct {
	stage *localstate.Staging
	have  map[string]int64
}

// drop aborts the staging (nil: nothing staged).
func (p *partial) drop() {
	if p != nil {
		p.stage.Abort()
	}
}

// files is the number of complete files staged (0 for nil).
func (p *partial) files() int {
	if p == nil {
		return 0
	}
	return len(p.have)
}

// path is the staged copy of h, if complete.
func (p *partial) path(h checkpoint.StateHandle) (string, bool) {
	if p == nil || p.have[h.Name] != h.Size {
		return "", false
	}
	path, size, ok := p.stage.Path(h.Name)
	return path, ok && size == h.Size
}

// newerAsked waits up to subsumedWait (or ctx) for a request of a checkpoint newer than
// want and reports whether one came.
func (f *Fetcher) newerAsked(ctx context.Context, c *copyState, want int64) bool {
	select {
	case <-c.wake: // the signal of the request just served
	default:
	}
	if newer, _ := f.next(c); newer > want {
		return true
	}
	t := time.NewTimer(subsumedWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-c.wake:
		newer, _ := f.next(c)
		return newer > want
	case <-t.C:
		return false
	}
}

// subsumedWait bounds how long a copy whose checkpoint's files are gone waits for the
// request to follow a newer checkpoint before it reports the error.
const subsumedWait = 5 * time.Second

// fetch copies the range's files of checkpoint n into one local entry and returns the
// bytes it downloaded. Files the local state already holds, or prev staged, are linked.
// An incomplete fetch returns what it staged for the next one (prev is then part of it);
// errSuperseded: checkpoint n was left for a newer one asked for meanwhile.
func (f *Fetcher) fetch(ctx context.Context, c *copyState, r Range, n int64, prev *partial) (int64, *partial, checkpoint.Metadata, error) {
	st := f.cfg.Storage
	job := f.cfg.JobID
	if f.cfg.Local == nil {
		return 0, prev, checkpoint.Metadata{}, fmt.Errorf("warm-up of %s key groups %d-%d: this TaskManager keeps no local state (state.backend.local-recovery is off or its directory did not open): a copy would not be used", r.Vertex, r.Start, r.End)
	}
	data, err := storage.ReadFile(ctx, st, checkpoint.MetadataPath(job, n))
	if err != nil {
		return 0, prev, checkpoint.Metadata{}, fmt.Errorf("warm-up of %s key groups %d-%d: reading checkpoint %d's %s in %s: %w", r.Vertex, r.Start, r.End, n, checkpoint.MetadataFile, st.URI(), err)
	}
	meta, err := checkpoint.DecodeMetadata(data)
	if err != nil {
		return 0, prev, checkpoint.Metadata{}, fmt.Errorf("warm-up of %s key groups %d-%d: checkpoint %d: %w", r.Vertex, r.Start, r.End, n, err)
	}
	handles := filesFor(meta, r)
	stage, err := f.cfg.Local.Stage(localstate.Key{Job: job, Vertex: r.Vertex, KeyGroupStart: r.Start, KeyGroupEnd: r.End, Checkpoint: n})
	if err != nil {
		return 0, prev, checkpoint.Metadata{}, err
	}
	cur := &partial{stage: stage, have: map[string]int64{}}
	// From here on prev's files the checkpoint lists are linked into cur: prev goes.
	defer prev.drop()
	var got int64
	for _, h := range handles {
		if p, ok := f.cfg.Local.Find(job, r.Vertex, h.Name, h.Size); ok {
			if err := stage.Link(h.Name, p); err == nil {
				cur.have[h.Name] = h.Size
				continue
			}
		}
		if p, ok := prev.path(h); ok {
			if err := stage.Link(h.Name, p); err == nil {
				cur.have[h.Name] = h.Size
				continue
			}
		}
		if newer, _ := f.next(c); newer > n {
			return got, cur, meta, errSuperseded
		}
		k, err := download(ctx, st, stage, resolve(meta, h.Name), h)
		got += k
		if err != nil {
			return got, cur, meta, fmt.Errorf("warm-up of %s key groups %d-%d: checkpoint %d: %w", r.Vertex, r.Start, r.End, n, err)
		}
		cur.have[h.Name] = h.Size
	}
	if err := stage.Commit(); err != nil {
		return got, nil, meta, err
	}
	return got, nil, meta, nil
}

// filesFor lists the handles of the vertex's subtasks whose key groups overlap the range
// (every handle of the vertex when the writers' ranges are unknown).
func filesFor(meta checkpoint.Metadata, r Range) []checkpoint.StateHandle {
	overlap := func(int) bool { return true }
	if len(r.Sources) > 0 && r.SourceAttempt == meta.Attempt {
		src := map[int]Source{}
		for _, s := range r.Sources {
			src[s.Subtask] = s
		}
		overlap = func(i int) bool {
			s, ok := src[i]
			return !ok || (s.Start <= r.End && s.End >= r.Start)
		}
	}
	var out []checkpoint.StateHandle
	for _, st := range meta.Subtasks {
		if st.Subtask.Vertex == r.Vertex && overlap(st.Subtask.Index) {
			out = append(out, st.Handles...)
		}
	}
	return out
}

// resolve maps a handle name to its name in the storage: names are relative to the
// storage root (<job>/chk-<n>/…, <job>/shared/…); others to the checkpoint directory.
func resolve(meta checkpoint.Metadata, name string) string {
	if strings.HasPrefix(name, meta.JobID+"/") {
		return name
	}
	return path.Join(checkpoint.ChkDir(meta.JobID, meta.CheckpointID), name)
}

func download(ctx context.Context, st storage.Storage, stage *localstate.Staging, name string, h checkpoint.StateHandle) (int64, error) {
	rc, err := st.Open(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("opening %s in %s: %w", name, st.URI(), err)
	}
	defer rc.Close()
	w, err := stage.Create(h.Name)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, rc)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != h.Size {
		err = fmt.Errorf("%s in %s has %d bytes, _metadata records %d", name, st.URI(), n, h.Size)
	}
	if err != nil {
		return n, fmt.Errorf("copying %s from %s: %w", name, st.URI(), err)
	}
	return n, nil
}
