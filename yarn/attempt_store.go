package yarn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/storage"
)

// Files of an application's staging directory that carry state from one AM attempt to
// the next.
const (
	// AMAddressName holds host:port of the current attempt's RPC endpoint; surviving
	// TaskManagers read it to find a restarted AM.
	AMAddressName = "am-address"
	// containersDir holds one file per launched container, named after the container id
	// and holding the id of the TaskManager running in it.
	containersDir = "containers"
	// maxRecordSize bounds what is read from one record file.
	maxRecordSize = 4096
)

// errNoRecord: the staging directory has no record of a container (launched by an
// attempt that died before writing it).
var errNoRecord = errors.New("no record in the staging directory")

// StagingStore keeps what a later AM attempt needs in the application's staging
// directory <root>/<app>: the AM's address for surviving TaskManagers, and which
// TaskManager runs in which container. It also removes the directory once the
// application has finished.
type StagingStore struct {
	st  storage.Storage // the staging root
	app string          // the application's directory under it
}

// NewStagingStore keeps records under app/ in st (the staging root, whose URI is
// Submission.Staging's).
func NewStagingStore(st storage.Storage, app string) (*StagingStore, error) {
	if app == "" || strings.ContainsAny(app, "/\\") || app == "." || app == ".." {
		return nil, fmt.Errorf("staging directory of application %q: expected a plain directory name", app)
	}
	return &StagingStore{st: st, app: app}, nil
}

// OpenStagingStore opens the application staging directory dir (hdfs://…/.tide/<appId>,
// as EnvStagingDir names it) as user.
func OpenStagingStore(ctx context.Context, dir, user string) (*StagingStore, error) {
	dir = strings.TrimRight(dir, "/")
	i := strings.LastIndex(dir, "/")
	if i < 0 || !strings.Contains(dir[:i], "://") {
		return nil, fmt.Errorf("staging directory %q: expected scheme://…/<application id>", dir)
	}
	st, err := storage.Open(ctx, dir[:i], storage.Options{User: user})
	if err != nil {
		return nil, fmt.Errorf("opening the staging root of %s: %w", dir, err)
	}
	s, err := NewStagingStore(st, dir[i+1:])
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return s, nil
}

// Dir is the URI of the application's staging directory.
func (s *StagingStore) Dir() string { return s.st.URI() + "/" + s.app }

// AMAddressURI is the URI of the AM address file.
func (s *StagingStore) AMAddressURI() string { return s.Dir() + "/" + AMAddressName }

// PublishAMAddress atomically replaces the AM address file with addr (host:port).
func (s *StagingStore) PublishAMAddress(ctx context.Context, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("publishing the AM address %q: expected host:port: %w", addr, err)
	}
	if err := s.write(ctx, s.app+"/"+AMAddressName, addr+"\n"); err != nil {
		return fmt.Errorf("publishing the AM address %s in %s: %w", addr, s.Dir(), err)
	}
	return nil
}

// RecordContainer notes that TaskManager tm runs in container.
func (s *StagingStore) RecordContainer(ctx context.Context, container string, tm core.TaskManagerID) error {
	if err := checkRecordName(container); err != nil {
		return err
	}
	if err := s.write(ctx, s.app+"/"+containersDir+"/"+container, string(tm)+"\n"); err != nil {
		return fmt.Errorf("recording TaskManager %s in container %s: %w", tm, container, err)
	}
	return nil
}

// ContainerTaskManager is the TaskManager RecordContainer noted for container; errNoRecord
// (wrapped) when there is none.
func (s *StagingStore) ContainerTaskManager(ctx context.Context, container string) (core.TaskManagerID, error) {
	if err := checkRecordName(container); err != nil {
		return "", err
	}
	name := s.app + "/" + containersDir + "/" + container
	b, err := s.read(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return "", fmt.Errorf("container %s: %w", container, errNoRecord)
	}
	if err != nil {
		return "", fmt.Errorf("reading the TaskManager of container %s: %w", container, err)
	}
	id := strings.TrimSpace(string(b))
	if id == "" || strings.ContainsAny(id, " \t\n") {
		return "", fmt.Errorf("container %s: record %q: expected one TaskManager id", container, b)
	}
	return core.TaskManagerID(id), nil
}

// ContainerRecords lists every container record: container id → TaskManager id. A
// staging directory without records yields an empty map; a record that cannot be read or
// names no TaskManager is left out (and reported in the error, with the others returned).
func (s *StagingStore) ContainerRecords(ctx context.Context) (map[string]core.TaskManagerID, error) {
	out := map[string]core.TaskManagerID{}
	files, err := s.st.List(ctx, s.app+"/"+containersDir)
	if errors.Is(err, storage.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("listing the container records in %s: %w", s.Dir(), err)
	}
	var errs []error
	for _, f := range files {
		if f.IsDir || checkRecordName(f.Name) != nil {
			continue
		}
		tm, err := s.ContainerTaskManager(ctx, f.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[f.Name] = tm
	}
	return out, errors.Join(errs...)
}

// ForgetContainer deletes the record of container (which completed); nil if there is none.
func (s *StagingStore) ForgetContainer(ctx context.Context, container string) error {
	if err := checkRecordName(container); err != nil {
		return err
	}
	if err := s.st.Delete(ctx, s.app+"/"+containersDir+"/"+container); err != nil {
		return fmt.Errorf("deleting the record of container %s: %w", container, err)
	}
	return nil
}

// Remove deletes the application's staging directory.
func (s *StagingStore) Remove(ctx context.Context) error {
	if err := s.st.Delete(ctx, s.app); err != nil {
		return fmt.Errorf("removing the staging directory %s: %w", s.Dir(), err)
	}
	return nil
}

// Close closes the staging root.
func (s *StagingStore) Close() error { return s.st.Close() }

func (s *StagingStore) write(ctx context.Context, name, content string) error {
	w, err := s.st.Create(ctx, name)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, content); err != nil {
		_ = w.Abort(ctx)
		return err
	}
	return w.Commit(ctx)
}

func (s *StagingStore) read(ctx context.Context, name string) ([]byte, error) {
	r, err := s.st.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, maxRecordSize))
}

func checkRecordName(container string) error {
	if _, err := ParseContainerID(container); err != nil {
		return fmt.Errorf("container record %q: %w", container, err)
	}
	return nil
}
