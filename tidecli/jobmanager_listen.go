package tidecli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/standalone"
)

// The flags through which tide run --target local hands the AM the sockets it bound.
const (
	rpcListenerFDFlag  = standalone.RPCListenerFDFlag
	restListenerFDFlag = standalone.RESTListenerFDFlag
)

// listen binds addr, or, when the flag named fdFlag is set, serves on the listening socket
// the parent passed as that file descriptor.
func listen(ctx context.Context, c *cli.Context, fdFlag, addr string) (net.Listener, error) {
	if !c.IsSet(fdFlag) {
		return (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	}
	fd := c.Int(fdFlag)
	if fd < 3 {
		return nil, fmt.Errorf("--%s %d: expected an inherited descriptor, 3 or more", fdFlag, fd)
	}
	f := os.NewFile(uintptr(fd), "--"+fdFlag+"="+strconv.Itoa(fd))
	defer f.Close() // FileListener holds its own copy
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("--%s %d: expected a listening TCP socket: %w", fdFlag, fd, err)
	}
	if _, ok := ln.(*net.TCPListener); !ok {
		ln.Close()
		return nil, fmt.Errorf("--%s %d: expected a listening TCP socket, got %s", fdFlag, fd, ln.Addr().Network())
	}
	return ln, nil
}
