package tidecli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"
)

// listenWith runs listen for the REST flag under the command-line args.
func listenWith(t *testing.T, addr string, args ...string) (net.Listener, error) {
	t.Helper()
	var ln net.Listener
	var lerr error
	app := &cli.App{
		Flags: []cli.Flag{&cli.IntFlag{Name: restListenerFDFlag}},
		Action: func(c *cli.Context) error {
			ln, lerr = listen(c.Context, c, restListenerFDFlag, addr)
			return nil
		},
	}
	if err := app.RunContext(context.Background(), append([]string{"tide"}, args...)); err != nil {
		t.Fatal(err)
	}
	return ln, lerr
}

// handOver is a copy of f's descriptor for listen to take over (and close), as a child
// process owns what it inherited.
func handOver(t *testing.T, f *os.File) string {
	t.Helper()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(fd)
}

// TestListenInherited: the AM serves on a listening socket handed to it by descriptor, and
// refuses a descriptor that is not one, naming the flag.
func TestListenInherited(t *testing.T) {
	parent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parent.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	parent.Close() // the socket stays open through f, as in a child that inherited it
	fd := handOver(t, f)
	f.Close()
	ln, err := listenWith(t, "127.0.0.1:1", "--"+restListenerFDFlag, fd)
	if err != nil {
		t.Fatalf("listen on inherited descriptor %s: %v", fd, err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			_, err = conn.Write([]byte("hi"))
			conn.Close()
		}
		done <- err
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	if _, err := conn.Read(b); err != nil || string(b) != "hi" {
		t.Fatalf("read %q, %v through the inherited socket", b, err)
	}
	conn.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	regular, err := os.Create(filepath.Join(t.TempDir(), "not-a-socket"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	for _, tt := range []struct{ fd, want string }{
		{"1", "expected an inherited descriptor, 3 or more"},
		{handOver(t, regular), "expected a listening TCP socket"},
	} {
		if _, err := listenWith(t, "127.0.0.1:1", "--"+restListenerFDFlag, tt.fd); err == nil ||
			!strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), restListenerFDFlag) {
			t.Errorf("listen on descriptor %s = %v, want an error naming the flag and %q", tt.fd, err, tt.want)
		}
	}
	// Without the flag the address is bound as configured.
	ln, err = listenWith(t, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
