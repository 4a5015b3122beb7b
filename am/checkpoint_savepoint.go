package am

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
)

// errBadSavepoint is wrapped by every error saying that a savepoint cannot start the job:
// it is not there, not complete, damaged, or does not fit the job.
var errBadSavepoint = errors.New("cannot start from savepoint")

// savepoint is a complete checkpoint outside state.checkpoints.dir (written by POST
// /jobs/:jobid/savepoints, or a retained checkpoint) that the job starts from. Its files
// live in dir under storageURI, named as the _metadata lists them minus their original
// <job>/chk-<n>/ prefix.
type savepoint struct {
	location   string // the savepoint directory's URI, for logs and statistics
	storageURI string // the storage root holding dir
	dir        string
	md         checkpoint.Metadata
	coord      map[string][]byte // source coordinator state, by source vertex
}

// resolve maps a file name the savepoint's _metadata lists to its name in the storage.
// A retained checkpoint in place has dir <job>/chk-<n> (see retainedInPlace), a savepoint
// copy its shared files in <dir>/shared/ (copied there by copySavepoint); the TaskManagers
// resolve with the same rule from the RestoreLocation.
func (sp *savepoint) resolve(name string) string {
	return checkpoint.ListedName(sp.md, sp.dir, name)
}

// splitSavepointPath turns what a user passes to --fromSavepoint (an absolute path, taken
// literally, or a file:// or hdfs:// URI, percent-encoded; the directory or its _metadata
// file) into a storage root URI and the savepoint's directory under it.
func splitSavepointPath(p string) (storageURI, dir string, err error) {
	u, err := parseSavepointLocation(p)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", errBadSavepoint, err)
	}
	clean := u.Path
	if path.Base(clean) == checkpoint.MetadataFile {
		clean = path.Dir(clean)
	}
	if clean == "/" {
		return "", "", fmt.Errorf("%w %q: expected the savepoint's directory, not the root", errBadSavepoint, p)
	}
	u.Path = path.Dir(clean)
	return u.String(), path.Base(clean), nil
}

// loadSavepoint opens the savepoint at location and checks that it can start the job of
// graph: its _metadata is there and decodes, every file it lists is there with its
// recorded size, every vertex keeps its maxParallelism (key groups cannot be remapped),
// and every vertex with state in it is still in the job (unless allowNonRestored: then
// that state is dropped). Every refusal wraps errBadSavepoint.
func loadSavepoint(ctx context.Context, location string, graph *jobgraph.JobGraph, allowNonRestored bool) (*savepoint, []string, error) {
	storageURI, dir, err := splitSavepointPath(location)
	if err != nil {
		return nil, nil, err
	}
	root, err := url.Parse(storageURI)
	if err != nil {
		return nil, nil, fmt.Errorf("%w %s: %w", errBadSavepoint, location, err)
	}
	if root.Scheme == "file" {
		// Opening a file:// storage creates its root: refuse a parent that is not there.
		if _, err := os.Stat(root.Path); err != nil {
			return nil, nil, fmt.Errorf("%w %s: %w", errBadSavepoint, location, err)
		}
	}
	st, err := storage.Open(ctx, storageURI, storage.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("savepoint %s: open its storage %s: %w", location, storageURI, err)
	}
	defer func() { st.Close() }()
	spURI := *root
	spURI.Path = path.Join(root.Path, dir)
	sp := &savepoint{location: spURI.String(), storageURI: st.URI(), dir: dir}
	if _, err := st.Stat(ctx, dir); errors.Is(err, storage.ErrNotFound) {
		return nil, nil, fmt.Errorf("%w %s: no such directory", errBadSavepoint, sp.location)
	} else if err != nil {
		return nil, nil, fmt.Errorf("savepoint %s: %w", sp.location, err)
	}
	mdName := path.Join(dir, checkpoint.MetadataFile)
	if _, err := st.Stat(ctx, mdName); errors.Is(err, storage.ErrNotFound) {
		return nil, nil, fmt.Errorf("%w %s: it has no %s, so it is not a complete savepoint (a savepoint directory counts only once %s is written, last)",
			errBadSavepoint, sp.location, checkpoint.MetadataFile, checkpoint.MetadataFile)
	} else if err != nil {
		return nil, nil, fmt.Errorf("savepoint %s: %w", sp.location, err)
	}
	if sp.md, err = readMetadataFile(ctx, st, mdName); err != nil {
		if errors.Is(err, errDamagedCheckpoint) {
			return nil, nil, fmt.Errorf("%w %s: %w", errBadSavepoint, sp.location, err)
		}
		return nil, nil, fmt.Errorf("savepoint %s: %w", sp.location, err)
	}
	if in, err := retainedInPlace(ctx, st, root.Path, dir, sp.md); err != nil {
		return nil, nil, fmt.Errorf("savepoint %s: %w", sp.location, err)
	} else if in {
		// Root the storage at the checkpoints directory, so dir is <job>/chk-<n> and the
		// job's shared files are found beside it where its _metadata lists them.
		parent := *root
		parent.Path, parent.RawPath = path.Dir(root.Path), ""
		pst, err := storage.Open(ctx, parent.String(), storage.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("savepoint %s: open its storage %s: %w", location, parent.String(), err)
		}
		st.Close()
		st = pst
		sp.storageURI, sp.dir = st.URI(), path.Join(sp.md.JobID, dir)
	}
	if err := validateListed(ctx, st, sp.md, sp.resolve); err != nil {
		if errors.Is(err, errDamagedCheckpoint) {
			return nil, nil, fmt.Errorf("%w %s (checkpoint %d of job %s): %w", errBadSavepoint, sp.location, sp.md.CheckpointID, sp.md.JobID, err)
		}
		return nil, nil, fmt.Errorf("savepoint %s: %w", sp.location, err)
	}
	if sp.coord, err = readSavepointCoordinator(ctx, st, sp); err != nil {
		return nil, nil, err
	}
	dropped, err := sp.fit(graph, allowNonRestored)
	if err != nil {
		return nil, nil, err
	}
	return sp, dropped, nil
}

// retainedInPlace reports whether directory dir of the storage rooted at rootPath is a
// checkpoint retained where its job wrote it (<checkpoints>/<job>/chk-<n>, resumed with
// --fromSavepoint): dir is chk-<its id>, the root is its job's directory, and dir holds
// no shared/ of its own (a savepoint copy would: copySavepoint puts the tables there).
func retainedInPlace(ctx context.Context, st storage.Storage, rootPath, dir string, md checkpoint.Metadata) (bool, error) {
	if dir != checkpoint.ChkName(md.CheckpointID) || path.Base(rootPath) != md.JobID {
		return false, nil
	}
	_, err := st.Stat(ctx, path.Join(dir, "shared"))
	if errors.Is(err, storage.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// readSavepointCoordinator reads the source coordinator state the savepoint lists.
func readSavepointCoordinator(ctx context.Context, st storage.Storage, sp *savepoint) (map[string][]byte, error) {
	out := map[string][]byte{}
	if !slices.ContainsFunc(sp.md.MasterStates, func(h checkpoint.StateHandle) bool { return h.Name == coordinatorFile }) {
		return out, nil // a job without sources
	}
	name := sp.resolve(coordinatorFile)
	r, err := st.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("savepoint %s: open %s: %w", sp.location, name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxMetadataSize))
	if err != nil {
		return nil, fmt.Errorf("savepoint %s: read %s: %w", sp.location, name, err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w %s: %s does not decode: %w", errBadSavepoint, sp.location, name, err)
	}
	return out, nil
}

// fit checks the savepoint against the job: a vertex the job has must keep its
// maxParallelism; state of a vertex the job no longer has is refused unless
// allowNonRestored, and then dropped (fit returns those vertices).
func (sp *savepoint) fit(graph *jobgraph.JobGraph, allowNonRestored bool) ([]string, error) {
	job := map[string]jobgraph.Vertex{}
	for _, v := range graph.Vertices {
		job[v.ID] = v
	}
	var problems []string
	var missing []string
	seen := map[string]bool{}
	noteMissing := func(id string) {
		if !seen[id] {
			seen[id] = true
			missing = append(missing, id)
		}
	}
	for _, vm := range sp.md.Vertices {
		v, ok := job[vm.ID]
		if !ok {
			noteMissing(vm.ID)
			continue
		}
		if want := v.EffectiveMaxParallelism(); vm.MaxParallelism != want {
			problems = append(problems, fmt.Sprintf("vertex %q has maxParallelism %d in the savepoint but %d in job %s: keyed state is split into maxParallelism key groups, which cannot be remapped; build the job with maxParallelism %d",
				vm.ID, vm.MaxParallelism, want, graph.Name, vm.MaxParallelism))
		}
	}
	for _, sub := range sp.md.Subtasks {
		if _, ok := job[sub.Subtask.Vertex]; !ok {
			noteMissing(sub.Subtask.Vertex)
		}
	}
	for id := range sp.coord {
		if _, ok := job[id]; !ok {
			noteMissing(id)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 && !allowNonRestored {
		problems = append(problems, fmt.Sprintf("it holds state of vertices %s that job %s does not have (its vertices: %s); pass --allowNonRestoredState to drop that state",
			strings.Join(missing, ", "), graph.Name, strings.Join(vertexIDs(graph), ", ")))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w %s (checkpoint %d of job %s): %s", errBadSavepoint, sp.location, sp.md.CheckpointID, sp.md.JobID,
			strings.Join(problems, "; "))
	}
	for _, id := range missing {
		delete(sp.coord, id)
	}
	return missing, nil
}

// pebbleManifestSuffix ends the name of a subtask's pebble database manifest: a
// checkpoint listing one holds keyed state in the pebble backend's native files.
const pebbleManifestSuffix = ".pebble"

// fitBackend refuses a savepoint holding pebble database files (NATIVE format) when the
// job runs on another state backend (backendType: state.backend.type as configured).
func (sp *savepoint) fitBackend(backendType string) error {
	b, _, err := state.ParseType(backendType)
	if err != nil || b == state.Pebble {
		return err
	}
	for _, st := range sp.md.Subtasks {
		for _, h := range st.Handles {
			if !strings.HasSuffix(h.Name, pebbleManifestSuffix) {
				continue
			}
			format := sp.md.FormatType
			if format == "" {
				format = checkpoint.FormatNative // a checkpoint's own files
			}
			return fmt.Errorf("%w %s (checkpoint %d of job %s): it is in %s format and holds vertex %q's keyed state as pebble database files, which state.backend.type %s cannot restore; start the job with state.backend.type pebble, or switch backends through a savepoint in %s format (the default: tide savepoint without --formatType %s)",
				errBadSavepoint, sp.location, sp.md.CheckpointID, sp.md.JobID, format, st.Subtask.Vertex, b,
				checkpoint.FormatCanonical, checkpoint.FormatNative)
		}
	}
	return nil
}

func vertexIDs(g *jobgraph.JobGraph) []string {
	out := make([]string, 0, len(g.Vertices))
	for _, v := range g.Vertices {
		out = append(out, v.ID)
	}
	return out
}
