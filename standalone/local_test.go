package standalone

import (
	"slices"
	"testing"
)

// TestCommonArgsDropOwnKeys: a -D entry for a key the local cluster sets itself (the AM's
// addresses) is left out, so each child gets that key once, with the cluster's value.
func TestCommonArgsDropOwnKeys(t *testing.T) {
	c := &LocalCluster{rpcPort: 6123, restPort: 8081, opts: LocalOptions{ConfigDir: "conf",
		Dynamic: []string{"rest.port=1", "parallelism.default=2", " jobmanager.rpc.address =10.0.0.1", "jobmanager.rpc.port=2", "rest.bind-address=0.0.0.0"}}}
	want := []string{"--configDir", "conf", "-D", "parallelism.default=2",
		"-D", "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port=6123",
		"-D", "rest.bind-address=127.0.0.1", "-D", "rest.port=8081"}
	if got := c.common(); !slices.Equal(got, want) {
		t.Fatalf("common() = %q, want %q", got, want)
	}
}
