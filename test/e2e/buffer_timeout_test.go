package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
)

// TestBufferTimeoutSettings runs WordCount across two TaskManagers with
// execution.buffer-timeout 0 (every record sent at once), 5 ms and -1 (only full buffers),
// and with pipeline.operator-chaining false: every setting is read by the AM and the
// TaskManagers alike and commits exactly one running count per word, the last count of
// every word being its total.
func TestBufferTimeoutSettings(t *testing.T) {
	in := t.TempDir()
	var sb strings.Builder
	const lines, perLine, vocab = 3000, 5, 50
	for l := range lines {
		for w := range perLine {
			fmt.Fprintf(&sb, "w%d ", (l*perLine+w)%vocab)
		}
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(in, "part-0.txt"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, setting := range []string{"execution.buffer-timeout=0", "execution.buffer-timeout=5 ms",
		"execution.buffer-timeout=-1", "pipeline.operator-chaining=false"} {
		t.Run(setting, func(t *testing.T) {
			out := t.TempDir()
			dyn := append(reactive(t.TempDir(), "200 ms"), setting)
			c := startCluster(t, examples.WordCountName, []string{"--input", in, "--output", out}, 2, dyn)
			select {
			case <-c.AMDone():
			case <-time.After(5 * time.Minute):
				t.Fatal("WordCount did not finish")
			}
			if err := c.AMErr(); err != nil {
				t.Fatalf("WordCount AM: %v", err)
			}
			got, err := examples.ReadCommittedOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != lines*perLine {
				t.Fatalf("committed %d running counts, want one per word (%d)", len(got), lines*perLine)
			}
			final := map[string]bool{}
			for _, l := range got {
				final[l] = true
			}
			for w := range vocab {
				if want := fmt.Sprintf("(w%d,%d)", w, lines*perLine/vocab); !final[want] {
					t.Fatalf("no committed %s: the count of w%d did not reach its total", want, w)
				}
			}
		})
	}
}
