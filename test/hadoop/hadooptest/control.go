package hadooptest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Command sends one line to the launcher's control channel and waits for its reply; a reply
// other than "ok" is returned as an error. Commands: ping, stop-namenode, restart-namenode,
// restart-datanode,
// set-space-quota /path bytes, clear-quota /path, safemode enter|leave,
// mkdir /path octal-mode [owner].
func (e *Env) Command(ctx context.Context, args ...string) error {
	line := strings.Join(args, " ")
	if strings.ContainsAny(line, "\n\r") {
		return fmt.Errorf("control command %q: newlines are not allowed", line)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", e.Control)
	if err != nil {
		return fmt.Errorf("control %q: dialling %s: %w", line, e.Control, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := fmt.Fprintf(conn, "%s\n", line); err != nil {
		return fmt.Errorf("control %q: sending: %w", line, err)
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return fmt.Errorf("control %q: reading the reply from %s: %w", line, e.Control, err)
	}
	reply = strings.TrimSpace(reply)
	if reply != "ok" {
		return fmt.Errorf("control %q: launcher replied %q", line, reply)
	}
	return nil
}

// StopNamenode shuts the namenode down (the datanode keeps running).
func (e *Env) StopNamenode(ctx context.Context) error { return e.Command(ctx, "stop-namenode") }

// RestartNamenode starts the namenode again on the same port and waits until it is active.
func (e *Env) RestartNamenode(ctx context.Context) error { return e.Command(ctx, "restart-namenode") }

// SetSpaceQuota limits the bytes (counting replication and whole blocks) under dir.
func (e *Env) SetSpaceQuota(ctx context.Context, dir string, bytes int64) error {
	return e.Command(ctx, "set-space-quota", dir, fmt.Sprint(bytes))
}

// ClearQuota removes dir's quotas.
func (e *Env) ClearQuota(ctx context.Context, dir string) error {
	return e.Command(ctx, "clear-quota", dir)
}

// SafeMode enters or leaves the namenode's safe mode.
func (e *Env) SafeMode(ctx context.Context, enter bool) error {
	if enter {
		return e.Command(ctx, "safemode", "enter")
	}
	return e.Command(ctx, "safemode", "leave")
}

// Mkdir creates dir as the HDFS superuser with mode and, if owner is set, gives it to owner.
func (e *Env) Mkdir(ctx context.Context, dir string, mode os.FileMode, owner string) error {
	args := []string{"mkdir", dir, fmt.Sprintf("%o", mode.Perm())}
	if owner != "" {
		args = append(args, owner)
	}
	return e.Command(ctx, args...)
}

// RestartDatanode stops the (first) datanode and starts it again on the same ports, waiting
// until it has registered with the namenode.
func (e *Env) RestartDatanode(ctx context.Context) error { return e.Command(ctx, "restart-datanode") }
