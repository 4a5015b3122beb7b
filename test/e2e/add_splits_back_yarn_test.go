package e2e

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestReaderTaskManagerKilledAfterNewSplits on YARN, with checkpoints and the
// split-assignment log on HDFS: the TaskManager container of a source reader that got
// splits after the last completed checkpoint is SIGKILLed; the AM gets a new container and
// the splits the dead reader got since go back to the enumerator, read again from the
// checkpointed position by one reader. The committed output is exact, and number by number
// the --timestamps output holds every split's numbers once: none read twice, none lost.
func TestYARNReaderTaskManagerKilledAfterNewSplits(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	out, stamps := t.TempDir(), t.TempDir()
	const records = 160000
	args := stampedCountArgs(records, out, stamps)
	ckpt := "tide-test/yarn-splits-back-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	root := hdfsDeletedAfter(t, env, ckpt)
	r := startYarnRun(t, env, []string{"-Dstate.checkpoints.dir=" + env.URI + "/" + ckpt}, args)
	jid := r.jobID(t)
	waitYarnRunning(t, r.track, jid, 2, nil)

	vertex := sourceVertex(t, args)
	logName := ckpt + "/" + jid + "/splits/" + url.QueryEscape(vertex) + ".log"
	victim := readerWithNewSplits(t, func() ([]byte, error) { return storage.ReadFile(context.Background(), root, logName) })
	tm := subtaskTaskManager(t, testkit.RESTGetter(r.track), jid, vertex, victim)
	killTaskManager(t, r.app, tm)
	t.Logf("killed %s, which runs reader %d with splits assigned since the last completed checkpoint", tm, victim)
	r.wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	st, err := examples.ReadCommittedTimestamps(stamps)
	if err != nil {
		t.Fatal(err)
	}
	if err := examples.CheckTimestamps(st, records); err != nil {
		t.Fatal(err)
	}
}
