package tidecli

import (
	"strings"
	"testing"

	_ "github.com/tidestream/tide/examples" // CheckableCount
)

// TestYarnRunRefusesOutputsItWouldLose: tide run --target yarn-per-job refuses, before it
// contacts YARN, an output the job would lose there: a relative local path (YARN deletes the
// container's working directory) or a scheme the file sink does not write to.
func TestYarnRunRefusesOutputsItWouldLose(t *testing.T) {
	t.Setenv("HADOOP_CONF_DIR", t.TempDir()) // no yarn-site.xml: a submission would fail differently
	t.Setenv("YARN_CONF_DIR", "")
	for _, tc := range []struct {
		output string
		want   []string
	}{
		{"out", []string{`file sink "sink"`, `relative local output path "out"`, "YARN deletes", "hdfs://"}},
		{"hdfs:tide/out", []string{`file sink "sink"`, `"hdfs:tide/out"`, "want hdfs:///absolute/path"}},
		{"s3://bucket/out", []string{`file sink "sink"`, `scheme "s3": want file:// or hdfs://`}},
	} {
		out, code := runTide(t, "run", "--target", "yarn-per-job", "--job-classname", "CheckableCount", "--", "--output", tc.output)
		if code != exitError {
			t.Errorf("--output %s: exit %d, want %d; output:\n%s", tc.output, code, exitError, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("--output %s: output lacks %q:\n%s", tc.output, w, out)
			}
		}
	}
}
