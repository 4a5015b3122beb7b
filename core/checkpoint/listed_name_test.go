package checkpoint

import "testing"

func TestListedName(t *testing.T) {
	md := Metadata{JobID: "job-a", CheckpointID: 7}
	tests := []struct {
		name, dir, listed, want string
	}{
		// In place: the job's own checkpoint, or a retained one resumed with --fromSavepoint
		// (the AM roots its storage at the checkpoints directory).
		{"in place: own file", "job-a/chk-7", "job-a/chk-7/count-0.state", "job-a/chk-7/count-0.state"},
		{"in place: shared table beside it", "job-a/chk-7", "job-a/shared/count-0-u1-c5-000012.sst", "job-a/shared/count-0-u1-c5-000012.sst"},
		{"in place: AM file", "job-a/chk-7", "_coordinator", "job-a/chk-7/_coordinator"},
		// A savepoint copy (NATIVE): its own files in dir, the shared tables in dir/shared.
		{"copy: own file", "savepoint-job-a-1234", "job-a/chk-7/count-0.state", "savepoint-job-a-1234/count-0.state"},
		{"copy: shared table", "savepoint-job-a-1234", "job-a/shared/count-0-u1-c5-000012.sst", "savepoint-job-a-1234/shared/count-0-u1-c5-000012.sst"},
		{"copy: AM file", "savepoint-job-a-1234", "_coordinator", "savepoint-job-a-1234/_coordinator"},
		{"copy: flat name (CANONICAL)", "savepoint-job-a-1234", "count-1.state", "savepoint-job-a-1234/count-1.state"},
		// A savepoint copy named like a checkpoint, or another checkpoint of the job, is no
		// checkpoint in place.
		{"copy named chk-7: shared table", "chk-7", "job-a/shared/t.sst", "chk-7/shared/t.sst"},
		{"other checkpoint's dir", "job-a/chk-8", "job-a/shared/t.sst", "job-a/chk-8/shared/t.sst"},
		{"other job's dir", "job-b/chk-7", "job-a/shared/t.sst", "job-b/chk-7/shared/t.sst"},
		// Another job's shared prefix is no shared name of this checkpoint.
		{"another job's shared name", "job-a/chk-7", "job-b/shared/t.sst", "job-a/chk-7/job-b/shared/t.sst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ListedName(md, tt.dir, tt.listed); got != tt.want {
				t.Errorf("ListedName(%q, %q) = %q, want %q", tt.dir, tt.listed, got, tt.want)
			}
		})
	}
}
