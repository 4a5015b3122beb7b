package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/tidestream/tide/internal/hadoop/ipc"
)

// clientProtocol is the namenode's RPC protocol for file system clients.
const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// Lease recovery waits: the namenode hands the last block's recovery to a datanode with its
// next heartbeat (dfs.heartbeat.interval, 3 s by default), so a recovery takes seconds.
const (
	leaseRecoveryTimeout = 2 * time.Minute  // give up (transiently) after this
	leaseRecoveryRepeat  = 10 * time.Second // ask recoverLease again after this without a close
	leasePollMax         = time.Second      // longest pause between isFileClosed polls
)

// errLeaseRecoveryPending says the namenode has not closed a file within leaseRecoveryTimeout
// of being asked to recover its lease. It is transient: a later attempt asks again.
var errLeaseRecoveryPending = errors.New("lease recovery has not closed the file yet")

// Namenode exceptions that mean "recovery under way or blocks still being reported: ask again".
var leaseRetryExceptions = map[string]bool{
	"org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException":     true,
	"org.apache.hadoop.hdfs.protocol.RecoveryInProgressException":      true,
	"org.apache.hadoop.ipc.RetriableException":                         true,
	"org.apache.hadoop.hdfs.server.namenode.SafeModeException":         true,
	"org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException": true,
}

// recoverLease closes the file at p (an absolute HDFS path) that a failed upload session left
// open, whoever holds its lease, and returns once the namenode says it is closed: the length
// it then has is what the datanodes hold, every byte of it ours. colinmarc/hdfs has no call
// for this (and its FileWriter cannot resume), so it goes over tide's own Hadoop IPC client:
// recoverLease (force: no waiting for the lease's soft limit), then isFileClosed until the
// datanode has finished the last block's recovery, asking recoverLease again now and then.
// A file that is already closed returns at once.
func (s *hdfsStorage) recoverLease(ctx context.Context, p string) error {
	var lastErr error
	for _, addr := range s.addrs {
		err := s.recoverLeaseAt(ctx, addr, p)
		if err == nil {
			return nil
		}
		lastErr = err
		if !standbyOrUnreachable(err) {
			return err
		}
	}
	return lastErr
}

func (s *hdfsStorage) recoverLeaseAt(ctx context.Context, addr, p string) error {
	dialer := &net.Dialer{Timeout: s.opts.RPCTimeout, KeepAlive: 30 * time.Second}
	ic, err := ipc.New(ipc.Config{Addr: addr, Protocol: clientProtocol, User: s.user, Dial: dialer.DialContext,
		Logger: s.r.log})
	if err != nil {
		return err
	}
	defer ic.Close()
	holder := "tide-lease-recovery-" + randomHex(6)
	start := time.Now()
	var asked time.Time
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, leasePollMax) {
		var closed bool
		var err error
		if asked.IsZero() || time.Since(asked) >= leaseRecoveryRepeat {
			asked = time.Now()
			closed, err = s.namenodeBool(ctx, ic, "recoverLease", p, holder)
		} else {
			closed, err = s.namenodeBool(ctx, ic, "isFileClosed", p, "")
		}
		var re *ipc.RemoteError
		switch {
		case err == nil && closed:
			s.r.log.Debug("storage: lease recovered", "path", p, "took", time.Since(start))
			return nil
		case errors.As(err, &re) && leaseRetryExceptions[re.Class]:
			// under way; poll on
		case err != nil:
			return err
		}
		if time.Since(start) >= leaseRecoveryTimeout {
			return fmt.Errorf("%s after %s: %w", p, time.Since(start).Round(time.Millisecond), errLeaseRecoveryPending)
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
}

// namenodeBool calls a ClientProtocol method whose request is {1: src, 2: clientName (when
// not empty)} and whose reply is {1: bool result}: recoverLease and isFileClosed.
func (s *hdfsStorage) namenodeBool(ctx context.Context, ic *ipc.Client, method, src, clientName string) (bool, error) {
	var req []byte
	req = protowire.AppendTag(req, 1, protowire.BytesType)
	req = protowire.AppendString(req, src)
	if clientName != "" {
		req = protowire.AppendTag(req, 2, protowire.BytesType)
		req = protowire.AppendString(req, clientName)
	}
	in := &emptypb.Empty{}
	in.ProtoReflect().SetUnknown(req)
	out := &emptypb.Empty{}
	cctx, cancel := context.WithTimeout(ctx, s.opts.RPCTimeout)
	defer cancel()
	if err := ic.Call(cctx, method, in, out); err != nil {
		var re *ipc.RemoteError
		if errors.As(err, &re) {
			return false, ipcRemote{re}
		}
		return false, err
	}
	if v, ok := boolResult(out.ProtoReflect().GetUnknown()); ok {
		return v, nil
	}
	return false, fmt.Errorf("namenode %s: %s(%s): reply without a result", ic.Addr(), method, src)
}

// boolResult reads field 1, a bool, from an encoded reply; ok is false when the reply has no
// such field or does not parse.
func boolResult(b []byte) (v, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false, false
		}
		b = b[n:]
		if num == 1 && typ == protowire.VarintType {
			x, n := protowire.ConsumeVarint(b)
			return x != 0, n >= 0
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return false, false
		}
		b = b[n:]
	}
	return false, false
}

// ipcRemote shows a namenode exception from tide's IPC client the way colinmarc/hdfs shows
// its own (the hdfs.Error interface), so that classifyHDFS sorts both alike.
type ipcRemote struct{ re *ipc.RemoteError }

func (e ipcRemote) Error() string     { return e.re.Error() }
func (e ipcRemote) Unwrap() error     { return e.re }
func (e ipcRemote) Method() string    { return e.re.Method }
func (e ipcRemote) Desc() string      { return "ERROR_APPLICATION" }
func (e ipcRemote) Exception() string { return e.re.Class }
func (e ipcRemote) Message() string   { return e.re.Message }

// standbyOrUnreachable reports whether another namenode of an HA pair is worth asking.
func standbyOrUnreachable(err error) bool {
	return errors.Is(err, ipc.ErrUnreachable) || ipc.IsRemoteClass(err, "org.apache.hadoop.ipc.StandbyException")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
