package tidecli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// After tide run --cancel-on-exit kills an application, YARN reports it KILLED before its
// NodeManagers have stopped the containers. A container still running may write into the
// staging directory, where the checkpoints live by default: the AM persists its state as
// it stops, a TaskManager finishes uploading a snapshot. Any such write recreates the
// directory tide run just removed. So tide run waits for the AM to stop answering, removes
// the directory, and removes it again if it reappears within stagingQuiet.

// stagingQuiet is how long the removed staging directory must stay gone.
var stagingQuiet = 3 * time.Second

// stagingPoll is how often the AM and the staging directory are checked.
var stagingPoll = 250 * time.Millisecond

// awaitAMStopped waits until the AM's REST address (base, the application's original
// tracking URL) stops answering, which it does after its last write. It returns at once
// when there is no address; ctx bounds the wait.
func awaitAMStopped(ctx context.Context, base string) error {
	if base == "" {
		return nil
	}
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/config", nil)
		if err != nil {
			return fmt.Errorf("the AM's address %q: %w", base, err)
		}
		resp, err := c.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("the AM at %s still answers: %w", base, ctx.Err())
			}
			return nil // nothing answers: the AM has stopped
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return fmt.Errorf("the AM at %s still answers: %w", base, ctx.Err())
		case <-time.After(stagingPoll):
		}
	}
}

// removeStagingForGood deletes the application's staging directory (name under st, the
// staging root) and deletes it again whenever it reappears before it has stayed gone for
// stagingQuiet. It says on out when it had to delete again.
func removeStagingForGood(ctx context.Context, out io.Writer, st storage.Storage, name, dir string) error {
	if err := st.Delete(ctx, name); err != nil {
		return err
	}
	goneSince := time.Now()
	for time.Since(goneSince) < stagingQuiet {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for it to stay gone: %w", ctx.Err())
		case <-time.After(stagingPoll):
		}
		_, err := st.Stat(ctx, name)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("checking it stays gone: %w", err)
		}
		fmt.Fprintf(out, "Staging directory %s reappeared (a container YARN had not stopped yet wrote into it); removing it again\n", dir)
		if err := st.Delete(ctx, name); err != nil {
			return err
		}
		goneSince = time.Now()
	}
	return nil
}

// retainedInStaging reports whether a killed application's checkpoints are to be kept in
// its staging directory: they go there (state.checkpoints.dir unset) and the retention
// keeps them when the job is cancelled, which killing it is.
func retainedInStaging(cfg *conf.Config) bool {
	dir, ok := conf.CheckpointsDir.Lookup(cfg)
	return (!ok || dir == "") && conf.CheckpointsRetention.Get(cfg) == am.RetainOnCancellation
}

// stagingCheckpoints is where an application's checkpoints go when state.checkpoints.dir
// is unset: under its staging directory dir (a URI, or a path in the staging storage).
func stagingCheckpoints(dir string) string { return dir + "/checkpoints" }

// latestStagedCheckpoint is the path under st (the staging root) of the newest completed
// checkpoint in application name's default checkpoint directory; "" when none completed.
func latestStagedCheckpoint(ctx context.Context, st storage.Storage, name string) (string, error) {
	root := stagingCheckpoints(name)
	jobs, err := st.List(ctx, root)
	if errors.Is(err, storage.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	latest, newest := "", int64(0)
	for _, j := range jobs {
		if !j.IsDir {
			continue
		}
		sel, err := am.ScanCheckpoints(ctx, st, root+"/"+j.Name)
		if err != nil {
			return "", err
		}
		if sel.Latest > newest {
			latest, newest = root+"/"+checkpoint.ChkDir(j.Name, sel.Latest), sel.Latest
		}
	}
	return latest, nil
}
