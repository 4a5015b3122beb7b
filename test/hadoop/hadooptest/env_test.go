package hadooptest

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string
		check    func(t *testing.T, e *Env)
	}{
		{
			name: "hdfs only",
			in:   "# comment\nHDFS_NAMENODE=127.0.0.1:9000\n\nHADOOP_CONF_DIR=/c\nHADOOP_CONTROL=127.0.0.1:7\n",
			check: func(t *testing.T, e *Env) {
				if e.Namenode != "127.0.0.1:9000" || e.URI != "hdfs://127.0.0.1:9000" || e.ConfDir != "/c" ||
					e.Control != "127.0.0.1:7" || e.YARNResourceManager != "" || e.NodeManagers != nil {
					t.Fatalf("got %+v", e)
				}
			},
		},
		{
			name: "with yarn",
			in: "HDFS_NAMENODE=h:1\nHDFS_URI=hdfs://h:1\nHADOOP_CONF_DIR=/c\nHADOOP_CONTROL=h:2\n" +
				"YARN_RM_ADDRESS=vm:3\nYARN_SCHEDULER_ADDRESS=vm:4\nYARN_NODEMANAGERS=vm:5,vm:6\n",
			check: func(t *testing.T, e *Env) {
				if e.YARNResourceManager != "vm:3" || e.YARNScheduler != "vm:4" || len(e.NodeManagers) != 2 || e.NodeManagers[1] != "vm:6" {
					t.Fatalf("got %+v", e)
				}
			},
		},
		{name: "missing keys", in: "HDFS_NAMENODE=h:1\n", wantErr: "HADOOP_CONF_DIR is missing"},
		{name: "bad line (see testkit.ParseEnv)", in: "HDFS_NAMENODE h:1\n", wantErr: "line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tc.check(t, e)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("HDFS_NAMENODE=h:1\nHADOOP_CONF_DIR=/c\nHADOOP_CONTROL=h:2\nYARN_NODEMANAGERS=a:1,b:2\n")
	f.Add("# x\n=\n")
	f.Fuzz(func(t *testing.T, in string) {
		e, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		if e.Namenode == "" || e.ConfDir == "" || e.Control == "" || e.URI == "" {
			t.Fatalf("Parse(%q) succeeded without the required keys: %+v", in, e)
		}
	})
}
