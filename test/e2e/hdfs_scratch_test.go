package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// scratchName is a new directory name under tide-test/ for one test's files in HDFS.
func scratchName(prefix string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return "tide-test/" + prefix + "-" + hex.EncodeToString(r[:])
}

// hdfsDeletedAfter opens the cluster's file system at its root as the current user and
// deletes rel (relative to that root) when the test ends, failing the test if the delete
// fails. The returned storage stays open until then.
func hdfsDeletedAfter(t testing.TB, env *hadooptest.Env, rel string) storage.Storage {
	t.Helper()
	root, err := storage.Open(context.Background(), env.URI+"/", storage.Options{User: currentUser()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.Delete(context.Background(), rel); err != nil {
			t.Errorf("deleting %s: %v", rel, err)
		}
		root.Close()
	})
	return root
}
