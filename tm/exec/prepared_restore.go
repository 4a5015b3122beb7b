package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/state"
)

// Prepared restores (issue 14). A standby or warm-up copy (tm/warmup) holds a range's
// database files locally; a restore that takes the range over merges them into its own
// instance, and the part of that merge that rewrites entries (bottom-level tables that
// cannot be linked as they are) was most of a standby's switch at 1 GiB. PrepareRestore
// does that part ahead, while the job runs elsewhere: state.LinkableTables keeps a
// linkable copy of each such table, which the merge links (restoreDB passes the tables'
// handles and the executor's prepared tables to the restore).

// linkableTables returns the executor's prepared tables, opened on first use; nil when
// restores here never merge database files from the local store (not pebble, or no local
// recovery).
func (e *Executor) linkableTables() (*state.LinkableTables, error) {
	sb := e.cfg.StateBackend
	if sb.Type != state.Pebble || !sb.LocalRecovery || e.cfg.LocalState == nil {
		return nil, nil
	}
	e.linkableMu.Lock()
	defer e.linkableMu.Unlock()
	if e.linkable == nil {
		lt, err := state.OpenLinkableTables(filepath.Join(e.cfg.LocalState.Dir(), "prepared", url.PathEscape(e.cfg.JobID)))
		if err != nil {
			return nil, err
		}
		e.linkable = lt
	}
	return e.linkable, nil
}

// preparedTables is what restores link from (nil: nothing prepared yet).
func (e *Executor) preparedTables() *state.LinkableTables {
	e.linkableMu.Lock()
	defer e.linkableMu.Unlock()
	return e.linkable
}

// PrepareRestore prepares a copy's files of checkpoint meta (key groups from..to of
// vertex, every file in the local store) for a merging restore; it runs on
// an OS thread at the uploads' lowered priority (state.backend.upload.nice), like the
// copy's other background work.
func (e *Executor) PrepareRestore(ctx context.Context, meta checkpoint.Metadata, vertex string, from, to int) error {
	lt, err := e.linkableTables()
	if err != nil || lt == nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		if inc := e.cfg.StateBackend.UploadNice; inc > 0 {
			_, _ = lowerUploadPriority(inc) // the thread ends with the goroutine
		}
		done <- e.prepareRestore(ctx, lt, meta, vertex, from, to)
	}()
	return <-done
}

func (e *Executor) prepareRestore(ctx context.Context, lt *state.LinkableTables, meta checkpoint.Metadata, vertex string, from, to int) error {
	start := time.Now()
	ls := e.cfg.LocalState
	var st state.PrepareStats
	sources := 0
	for _, sub := range meta.Subtasks {
		if sub.Subtask.Vertex != vertex {
			continue
		}
		for _, h := range sub.Handles {
			if !strings.HasSuffix(h.Name, dbManifestSuffix) {
				continue
			}
			if lo, hi, ok := manifestKeyGroups(h.Name); ok && (lo > to || hi < from) {
				continue
			}
			p, ok := ls.Find(e.cfg.JobID, vertex, h.Name, h.Size)
			if !ok {
				return fmt.Errorf("preparing checkpoint %d of %s key groups %d-%d: %s is not in the local state", meta.CheckpointID, vertex, from, to, h.Name)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("preparing checkpoint %d: %w", meta.CheckpointID, err)
			}
			var man dbManifest
			if err := json.Unmarshal(data, &man); err != nil {
				return fmt.Errorf("preparing checkpoint %d: %s: %w", meta.CheckpointID, h.Name, err)
			}
			lo, hi := max(from, man.KeyGroupStart), min(to, man.KeyGroupEnd)
			if lo > hi {
				continue
			}
			rs := state.RestoreSource{Files: map[string]string{}, Placeholders: map[string]int64{}, Handles: map[string]string{}}
			for _, f := range man.Files {
				if f.Table && !f.Overlaps(lo, hi) {
					rs.Placeholders[f.Name] = f.Size
					continue
				}
				fp, ok := ls.Find(e.cfg.JobID, vertex, f.Handle, f.Size)
				if !ok {
					return fmt.Errorf("preparing checkpoint %d of %s key groups %d-%d: %s is not in the local state", meta.CheckpointID, vertex, lo, hi, f.Handle)
				}
				rs.Files[f.Name] = fp
				rs.Handles[f.Name] = f.Handle
			}
			opts := state.PebbleOptions{Dir: e.cfg.StateBackend.Dir, Name: "prepare", Memory: e.cfg.StateBackend.Memory, Logger: e.log}
			s, err := lt.Prepare(ctx, opts, vertex, rs, lo, hi)
			if err != nil {
				return fmt.Errorf("preparing checkpoint %d of %s key groups %d-%d: %w", meta.CheckpointID, vertex, lo, hi, err)
			}
			st.Tables += s.Tables
			st.Written += s.Written
			st.Bytes += s.Bytes
			sources++
		}
	}
	if st.Written > 0 {
		e.log.Info("copy prepared for a merging restore", "checkpoint", meta.CheckpointID, "vertex", vertex,
			"key_groups", fmt.Sprintf("%d-%d", from, to), "sources", sources, "tables", st.Tables, "bytes", st.Bytes,
			"written", st.Written, "took_ms", time.Since(start).Milliseconds())
	}
	return nil
}

// prunePrepared deletes the prepared tables whose source file the local store dropped
// (after a checkpoint confirmed newer ones).
func (e *Executor) prunePrepared() {
	lt, ls := e.preparedTables(), e.cfg.LocalState
	if lt == nil || ls == nil {
		return
	}
	if n := lt.Prune(func(vertex, handle string, size int64) bool {
		_, ok := ls.Find(e.cfg.JobID, vertex, handle, size)
		return ok
	}); n > 0 {
		e.log.Debug("prepared tables of dropped local files deleted", "tables", n)
	}
}
