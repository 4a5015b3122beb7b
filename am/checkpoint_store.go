package am

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// coordinatorFile holds the source coordinator (split enumerator) state of one
// checkpoint, next to the subtasks' files; _metadata lists it as a master state.
const coordinatorFile = "_coordinator"

// checkpointStore reads and writes the AM's checkpoint files under <jobID>/.
type checkpointStore struct {
	st    storage.Storage
	jobID string
}

// scan lists <jobID>/ and classifies what it holds.
func (s *checkpointStore) scan(ctx context.Context) (checkpoint.Selection, error) {
	return ScanCheckpoints(ctx, s.st, s.jobID)
}

// ScanCheckpoints lists dir, a job's checkpoint directory in st (<state.checkpoints.dir>/
// <job-id>), and classifies what it holds (checkpoint.Select); a missing dir holds nothing.
func ScanCheckpoints(ctx context.Context, st storage.Storage, dir string) (checkpoint.Selection, error) {
	entries, err := st.List(ctx, dir)
	if errors.Is(err, storage.ErrNotFound) {
		return checkpoint.Selection{}, nil
	}
	if err != nil {
		return checkpoint.Selection{}, fmt.Errorf("list the checkpoints in %s/%s: %w", st.URI(), dir, err)
	}
	listing := make([]checkpoint.DirEntry, 0, len(entries))
	for _, e := range entries {
		de := checkpoint.DirEntry{Name: e.Name, IsDir: e.IsDir}
		if _, ok := checkpoint.ParseChkName(e.Name); ok && e.IsDir {
			files, err := st.List(ctx, path.Join(dir, e.Name))
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return checkpoint.Selection{}, fmt.Errorf("list %s/%s/%s: %w", st.URI(), dir, e.Name, err)
			}
			for _, f := range files {
				de.Files = append(de.Files, f.Name)
			}
		}
		listing = append(listing, de)
	}
	return checkpoint.Select(listing), nil
}

// writeFile writes name in st whole, naming the file in its errors.
func writeFile(ctx context.Context, st storage.Storage, name string, data []byte) error {
	w, err := st.Create(ctx, name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort(ctx)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := w.Commit(ctx); err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	return nil
}

// complete writes the coordinator state, then _metadata: the checkpoint exists only
// once the second write has committed.
func (s *checkpointStore) complete(ctx context.Context, done checkpoint.Completed, maxPar map[string]int, coordinator map[string][]byte) error {
	md := checkpoint.NewMetadata(s.jobID, done, maxPar, nil)
	if err := writeCompletion(ctx, s.st, checkpoint.ChkDir(s.jobID, done.ID), md, coordinator); err != nil {
		return fmt.Errorf("checkpoint %d of job %s: %w", done.ID, s.jobID, err)
	}
	return nil
}

// writeCompletion writes the coordinator state into dir of st, then md listing it as
// its master state as dir's _metadata, last: the checkpoint (or savepoint) in dir exists
// only once that write has committed.
func writeCompletion(ctx context.Context, st storage.Storage, dir string, md checkpoint.Metadata, coordinator map[string][]byte) error {
	coord, err := json.Marshal(coordinator)
	if err != nil {
		return fmt.Errorf("encode coordinator state: %w", err)
	}
	if err := writeFile(ctx, st, path.Join(dir, coordinatorFile), coord); err != nil {
		return err
	}
	md.MasterStates = []checkpoint.StateHandle{{Name: coordinatorFile, Size: int64(len(coord))}}
	meta, err := checkpoint.EncodeMetadata(md)
	if err != nil {
		return err
	}
	return writeFile(ctx, st, path.Join(dir, checkpoint.MetadataFile), meta)
}

// readCoordinator reads the source coordinator state of a complete checkpoint.
func (s *checkpointStore) readCoordinator(ctx context.Context, id int64) (map[string][]byte, error) {
	name := path.Join(checkpoint.ChkDir(s.jobID, id), coordinatorFile)
	r, err := s.st.Open(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return map[string][]byte{}, nil // a checkpoint of a job without sources
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	out := map[string][]byte{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	return out, nil
}

func (s *checkpointStore) remove(ctx context.Context, id int64) error {
	if err := s.st.Delete(ctx, checkpoint.ChkDir(s.jobID, id)); err != nil {
		return fmt.Errorf("delete checkpoint %d of job %s: %w", id, s.jobID, err)
	}
	return nil
}

// removeAll deletes checkpoint id and checks that its directory is gone: a writer that
// was still creating files can leave it (or bring it back) after the delete.
func (s *checkpointStore) removeAll(ctx context.Context, id int64) error {
	if err := s.remove(ctx, id); err != nil {
		return err
	}
	dir := checkpoint.ChkDir(s.jobID, id)
	_, err := s.st.Stat(ctx, dir)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("check that checkpoint %d of job %s is gone: %w", id, s.jobID, err)
	}
	return fmt.Errorf("checkpoint %d of job %s: %s is still there after the delete", id, s.jobID, dir)
}

// removeJob deletes the job's whole directory (<jobID>/: its checkpoints, shared/, the AM
// state, the split logs) when the job ends without keeping its checkpoints, and checks
// that nothing of it is left. A writer that was still finishing when the delete ran (an
// upload cancelled with the job) can bring a directory back, typically an empty shared/
// in which it created and then discarded its temporary file: removeJob deletes again
// once, and names what is left if the directory still does not stay gone.
func (s *checkpointStore) removeJob(ctx context.Context) error {
	for try := 1; ; try++ {
		if err := s.st.Delete(ctx, s.jobID); err != nil {
			return fmt.Errorf("delete the checkpoints of job %s in %s: %w", s.jobID, s.st.URI(), err)
		}
		left, err := s.st.List(ctx, s.jobID)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil
		case err != nil:
			return fmt.Errorf("check that the checkpoints of job %s are gone from %s: %w", s.jobID, s.st.URI(), err)
		case try == 2:
			names := make([]string, 0, len(left))
			for _, e := range left {
				names = append(names, e.Name)
			}
			return fmt.Errorf("the checkpoints of job %s: %s/%s still holds %v after deleting it twice (a writer still running?)",
				s.jobID, s.st.URI(), s.jobID, names)
		}
	}
}
