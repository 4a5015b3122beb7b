package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNWordCountReadsHDFS: WordCount on YARN with --input hdfs:///…: the AM lists the
// directory in HDFS and the TaskManagers read the files from there, none of them on the
// nodes' disks. The committed output holds every running count of every word once.
func TestYARNWordCountReadsHDFS(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	rel := scratchName("yarn-input")
	t.Setenv("HADOOP_CONF_DIR", env.ConfDir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root := hdfsDeletedAfter(t, env, rel)

	// The input is written locally, counted, uploaded, and deleted locally.
	local := t.TempDir()
	words, err := testkit.WriteWordCountInput(local, 1) // 4 files, 2,000,000 words
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i := range 4 {
		name := fmt.Sprintf("part-%d.txt", i)
		if err := eachLine(filepath.Join(local, name), func(line string) {
			examples.Tokenize(line, func(w string) { want[w]++ })
		}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(local, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := root.Create(ctx, rel+"/in/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(local, name)); err != nil {
			t.Fatal(err)
		}
	}

	out := t.TempDir() // the mini-cluster's containers run on this host
	run := startYarnJob(t, env, examples.WordCountName, nil, []string{"--input", "hdfs:///" + rel + "/in", "--output", out})
	run.wait(t, 3*time.Minute)
	checkRunningCounts(t, out, want, words)
}
