package tidecli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/storage"
)

// The AM is waited for while it answers, and not at all once nothing listens.
func TestAwaitAMStopped(t *testing.T) {
	defer setStagingTimes(50*time.Millisecond, time.Second)()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized) // an answer all the same
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := awaitAMStopped(ctx, srv.URL)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "still answers") {
		t.Fatalf("an AM that answers: %v, want a timeout saying it still answers", err)
	}
	stopped := make(chan time.Time, 1)
	go func() { time.Sleep(400 * time.Millisecond); at := time.Now(); srv.Close(); stopped <- at }()
	if err := awaitAMStopped(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	if at := <-stopped; returned.Before(at) {
		t.Fatalf("returned %s before the AM stopped", at.Sub(returned))
	}
	if err := awaitAMStopped(context.Background(), ""); err != nil {
		t.Fatalf("no address: %v", err)
	}
}

// A staging directory a late container writes into again is removed again; one that
// stays gone is removed once and nothing more is said.
func TestRemoveStagingForGood(t *testing.T) {
	defer setStagingTimes(20*time.Millisecond, 500*time.Millisecond)()
	for _, tc := range []struct {
		name      string
		rewrites  int
		wantAgain int
	}{
		{"stays gone", 0, 0},
		{"written once more", 1, 1},
		{"written twice more", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := tempStorage(t)
			const app = "application_1_0001"
			if err := write(st, app+"/chk-1/_metadata"); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < tc.rewrites; i++ {
					for { // until the directory is gone, then write into it as a late TaskManager would
						if _, err := st.Stat(ctx, app); err != nil {
							break
						}
						time.Sleep(5 * time.Millisecond)
					}
					time.Sleep(100 * time.Millisecond)
					// The removal may beat the write to its commit, as it may a real
					// late writer's: the directory reappeared all the same.
					_ = write(st, app+"/chk-2/state")
				}
			}()
			var out bytes.Buffer
			if err := removeStagingForGood(ctx, &out, st, app, "hdfs://nn/.tide/"+app); err != nil {
				t.Fatal(err)
			}
			<-done
			if _, err := st.Stat(ctx, app); err == nil {
				t.Fatalf("%s is there after removeStagingForGood", app)
			}
			if n := strings.Count(out.String(), "reappeared"); n != tc.wantAgain {
				t.Fatalf("said it reappeared %d times, want %d:\n%s", n, tc.wantAgain, out.String())
			}
		})
	}
}

func write(st storage.Storage, name string) error {
	w, err := st.Create(context.Background(), name)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("x")); err != nil {
		return err
	}
	return w.Commit(context.Background())
}

func setStagingTimes(poll, quiet time.Duration) (restore func()) {
	p, q := stagingPoll, stagingQuiet
	stagingPoll, stagingQuiet = poll, quiet
	return func() { stagingPoll, stagingQuiet = p, q }
}

// A killed application's checkpoints stay in its staging directory only when they went
// there (no state.checkpoints.dir) and the retention keeps them on cancellation.
func TestRetainedInStaging(t *testing.T) {
	for _, tt := range []struct {
		dynamic []string
		want    bool
	}{
		{nil, false},
		{[]string{"execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION"}, true},
		{[]string{"execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION", "state.checkpoints.dir=hdfs:///ck"}, false},
		{[]string{"execution.checkpointing.externalized-checkpoint-retention=NO_EXTERNALIZED_CHECKPOINTS"}, false},
	} {
		t.Setenv("FLINK_CONF_DIR", "")
		cfg, _, err := conf.Load("", tt.dynamic)
		if err != nil {
			t.Fatal(err)
		}
		if got := retainedInStaging(cfg); got != tt.want {
			t.Errorf("%v: retainedInStaging = %v, want %v", tt.dynamic, got, tt.want)
		}
	}
}

// The newest checkpoint with its metadata is the one a killed application keeps; one
// without metadata did not complete, and other names are no checkpoints.
func TestLatestStagedCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := tempStorage(t)
	const app = "application_1_0001"
	if got, err := latestStagedCheckpoint(ctx, st, app); err != nil || got != "" {
		t.Fatalf("no checkpoint directory: %q, %v; want none", got, err)
	}
	for _, name := range []string{"job-a/chk-1/_metadata", "job-a/chk-3/_metadata", "job-a/chk-4/part-0", "job-a/chk-07/_metadata", "job-a/shared/x", "job-a/_latest"} {
		if err := storage.WriteFile(ctx, st, app+"/checkpoints/"+name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := latestStagedCheckpoint(ctx, st, app)
	if err != nil || got != app+"/checkpoints/job-a/chk-3" {
		t.Fatalf("latest = %q, %v; want %s/checkpoints/job-a/chk-3 (chk-4 has no metadata)", got, err, app)
	}
}

// tempStorage is a file:// storage in a fresh directory, closed when the test ends.
func tempStorage(t *testing.T) storage.Storage {
	t.Helper()
	st, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
