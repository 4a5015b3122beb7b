package yarn

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/conf"
	tmworker "github.com/tidestream/tide/tm/worker"
)

func TestDurationKey(t *testing.T) {
	tests := []struct {
		dyn  []string
		want time.Duration
		ok   bool
	}{
		{nil, 5 * time.Second, true},
		{[]string{KeyHeartbeat + "=250 ms"}, 250 * time.Millisecond, true},
		{[]string{KeyHeartbeat + "=soon"}, 0, false},
		{[]string{KeyHeartbeat + "=0 s"}, 0, false},
	}
	for _, tt := range tests {
		// A malformed value is refused when the configuration is built (conf declares
		// the key) or, failing that, by durationKey.
		c, err := dynConf(tt.dyn)
		var got time.Duration
		if err == nil {
			got, err = durationKey(c, KeyHeartbeat, 5*time.Second)
		}
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%v: got %v, %v; want %v ok=%v", tt.dyn, got, err, tt.want, tt.ok)
		}
	}
}

func TestNewDriverFromConfOutsideAContainer(t *testing.T) {
	t.Setenv(EnvSchedulerAddress, "")
	if InContainer() {
		t.Fatal("InContainer without the scheduler address")
	}
	c, err := dynConf(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	if _, err := NewDriverFromConf(c, addr, addr, nil, nil); err == nil || !strings.Contains(err.Error(), EnvSchedulerAddress) {
		t.Fatalf("NewDriverFromConf outside a container: %v, want an error naming %s", err, EnvSchedulerAddress)
	}
}

// The TaskManagers the driver launches find the AM's address file under the name the
// worker reads.
func TestAMAddressFileEnvMatchesTheWorker(t *testing.T) {
	if envAMAddressFile != tmworker.EnvAMAddressFile {
		t.Fatalf("the driver sets %s, the TaskManager reads %s", envAMAddressFile, tmworker.EnvAMAddressFile)
	}
}

// dynConf builds a configuration from -D style key=value entries.
func dynConf(dyn []string) (*conf.Config, error) {
	entries, err := conf.ParseDynamic(dyn)
	if err != nil {
		return nil, err
	}
	c, _, err := conf.Build(entries)
	return c, err
}
