package stream

import (
	"errors"
	"fmt"
	"time"
)

// Submission is what a job is submitted with, for the checks its connectors register
// (a transactional sink needs checkpoints, and a transaction timeout above their interval).
type Submission struct {
	// CheckpointInterval is execution.checkpointing.interval when checkpoints are on
	// (state.checkpoints.dir set too), else 0.
	CheckpointInterval time.Duration
}

// AddSubmitCheck registers a check that runs when the job is submitted (tide run, tide
// jobmanager), before anything starts; its error refuses the submission.
func (j *Job) AddSubmitCheck(check func(Submission) error) {
	j.checks = append(j.checks, check)
}

// CheckSubmission runs the registered checks and returns every failure, naming the job.
func (j *Job) CheckSubmission(s Submission) error {
	var errs []error
	for _, check := range j.checks {
		if err := check(s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("job %q: %w", j.name, err)
	}
	return nil
}

// Fail records an error found while building the job (a connector's bad configuration);
// Vertices and Graph then return it, so the job fails to build with it. The first error wins.
func (j *Job) Fail(err error) { j.fail(err) }
