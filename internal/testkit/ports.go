package testkit

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort returns a loopback TCP port that was free a moment ago, for a test that must
// give a process its port before the process binds it (an AM restarted on the same ports,
// a script-started cluster). It picks from below the kernel's ephemeral range, so neither
// an outgoing connection nor a listener on port 0 (every TaskManager, every httptest
// server) can take the port in between; only another FreePort could, by the same draw.
// Where the range cannot be read it falls back to a port the kernel picks.
func FreePort(t Fataler) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}

// lowestTestPort is where FreePort's draws start: below it sit the ports well-known
// services listen on (Hadoop's 8020 and 9870, Kafka's 9092, ...).
const lowestTestPort = 10000

func freePort() (int, error) {
	if first, ok := ephemeralStart(); ok && first > lowestTestPort+1000 {
		for range 100 {
			p := lowestTestPort + rand.IntN(first-lowestTestPort)
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err == nil {
				ln.Close()
				return p, nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range (Linux).
func ephemeralStart() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	return n, err == nil
}
