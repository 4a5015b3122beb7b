package storage_test

import (
	"os/exec"
	"strings"
	"testing"
)

// storageDeps are the only non-standard packages storage/ may depend on (DESIGN.md: storage
// imports the standard library and HDFS): the HDFS client, the protobuf runtime it needs, and
// tide's own Hadoop IPC client, which it uses for the NameNode calls colinmarc/hdfs lacks.
var storageDeps = []string{
	"github.com/colinmarc/hdfs/v2",
	"github.com/tidestream/tide/internal/hadoop/",
	"google.golang.org/protobuf/",
	"github.com/jcmturner/", // colinmarc/hdfs's Kerberos support
	"github.com/hashicorp/go-uuid",
	"golang.org/x/",
}

// TestStorageDependencies keeps storage/ free of tide's drivers, AM and TaskManager: a storage
// that imported yarn/ or am/ would drag a cluster manager into every sink and checkpoint writer.
func TestStorageDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/tidestream/tide/storage" {
			continue
		}
		allowed := false
		for _, prefix := range storageDeps {
			if strings.HasPrefix(p, prefix) {
				allowed = true
				break
			}
		}
		if !allowed {
			t.Errorf("storage depends on %s: storage/ may use only the standard library, the HDFS client and internal/hadoop", p)
		}
	}
}
