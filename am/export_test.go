package am

import (
	"os"
	"path/filepath"
)

// PersistedDeploymentAttempt reads the AM state in the checkpoint directory dir (a local
// path) for jobID and returns the attempt of the deployment it records for a next AM to
// adopt (0: none, or no state written yet).
func PersistedDeploymentAttempt(dir, jobID string) (int64, error) {
	name := filepath.Join(dir, jobID, amStateFile)
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	s, err := decodeAMState(data, jobID, name)
	if err != nil || s.Deployment == nil {
		return 0, err
	}
	return int64(s.Deployment.Attempt), nil
}
