package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
)

// waitDeploymentRecorded waits until the AM state file name (<checkpoints>/<job>/_am_state)
// in st records attempt as the deployment a next AM adopts. The AM writes its state in the
// background, so an AM killed within that lag of a deployment (at load 30 it exceeded the
// time to the first completed checkpoint) is followed by a restore instead of an adoption:
// safe, but not what a test of adoption is about.
func waitDeploymentRecorded(t *testing.T, st storage.Storage, name string, attempt int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("attempt %d persisted as the adoptable deployment", attempt), func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		data, err := storage.ReadFile(ctx, st, name)
		if err != nil {
			return false, err
		}
		var s struct {
			Deployment *struct {
				Attempt int64 `json:"attempt"`
			} `json:"deployment"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return false, err
		}
		if s.Deployment == nil {
			return false, errors.New("no deployment in the AM state")
		}
		return s.Deployment.Attempt == attempt, fmt.Errorf("AM state names attempt %d", s.Deployment.Attempt)
	})
}

// waitDeploymentRecordedIn is waitDeploymentRecorded for a local checkpoint directory.
func waitDeploymentRecordedIn(t *testing.T, ckpt, jid string, attempt int64) {
	t.Helper()
	st, err := storage.Open(context.Background(), "file://"+ckpt, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitDeploymentRecorded(t, st, jid+"/_am_state", attempt)
}
