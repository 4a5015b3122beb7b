package storage

import (
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"

	"github.com/colinmarc/hdfs/v2"
)

// Java exception classes the namenode reports, by what they mean for a caller.
var (
	hdfsTransientExceptions = map[string]bool{
		"org.apache.hadoop.hdfs.server.namenode.SafeModeException":                  true,
		"org.apache.hadoop.ipc.RetriableException":                                  true,
		"org.apache.hadoop.ipc.StandbyException":                                    true,
		"org.apache.hadoop.ipc.ObserverRetryOnActiveException":                      true,
		"org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException":          true,
		"org.apache.hadoop.ipc.RetryException":                                      true,
		"org.apache.hadoop.ipc.ServerTooBusyException":                              true,
		"org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException":              false,
		"org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException":              false,
		"org.apache.hadoop.hdfs.server.blockmanagement.UnresolvedTopologyException": false,
	}
	hdfsQuotaExceptions = map[string]bool{
		"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException":            true,
		"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException":            true,
		"org.apache.hadoop.hdfs.protocol.QuotaExceededException":              true,
		"org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException": true,
	}
	hdfsPermissionExceptions = map[string]bool{
		"org.apache.hadoop.security.AccessControlException":                     true,
		"org.apache.hadoop.hdfs.server.namenode.SnapshotAccessControlException": true,
	}
	// "The DiskSpace quota of /a/b is exceeded: ..." / "The NameSpace quota (directories and
	// files) of directory /a/b is exceeded: ..."
	quotaDirPattern = regexp.MustCompile(`quota .*?of (?:directory )?(/\S*) is exceeded`)
)

// errNoNamenodeAddress is what colinmarc/hdfs reports when no namenode could be dialled.
const noNamenodeMessage = "no available namenodes"

// classifyHDFS sorts an error from colinmarc/hdfs. lastDial is the most recent namenode dial
// error (the library flattens it into a string).
func classifyHDFS(err error, lastDial error) class {
	var remote hdfs.Error
	if errors.As(err, &remote) {
		exc := remote.Exception()
		switch {
		case hdfsQuotaExceptions[exc]:
			c := class{kind: ErrQuotaExceeded}
			if m := quotaDirPattern.FindStringSubmatch(remote.Message()); m != nil {
				c.dir = m[1]
			}
			return c
		case hdfsPermissionExceptions[exc]:
			return class{kind: ErrPermission}
		case exc == "java.io.FileNotFoundException":
			return class{kind: ErrNotFound}
		case hdfsTransientExceptions[exc]:
			return class{transient: true}
		case exc == "java.io.IOException" && noDatanodesYet(remote.Message()):
			// Right after a namenode (re)start, before the datanodes have reported.
			return class{transient: true}
		}
		return class{}
	}
	if c, ok := classifyCommon(err); ok {
		return c
	}
	if errors.Is(err, hdfs.ErrReplicating) || errors.Is(err, errLeaseRecoveryPending) || errors.Is(err, errUploadCut) {
		return class{transient: true}
	}
	if strings.Contains(err.Error(), noNamenodeMessage) {
		var dnsErr *net.DNSError
		if errors.As(lastDial, &dnsErr) && dnsErr.IsNotFound {
			return class{kind: ErrNoSuchNamenode}
		}
		return class{transient: true, reconnect: true}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return class{kind: ErrNoSuchNamenode}
		}
		return class{transient: true, reconnect: true}
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return class{transient: true, reconnect: true}
	}
	return class{}
}

// noDatanodesYet recognises the namenode's "could only be written to 0 of the 1
// minReplication nodes. There are 0 datanode(s) running" refusal.
func noDatanodesYet(msg string) bool {
	return strings.Contains(msg, "minReplication nodes") || strings.Contains(msg, "There are 0 datanode(s) running")
}

// describeRemote wraps err so that its text carries the namenode's message; nil stays nil.
func describeRemote(err error) error {
	var remote hdfs.Error
	if err == nil || !errors.As(err, &remote) {
		return err
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(remote.Message()), "\n")
	if msg == "" || strings.Contains(err.Error(), msg) {
		return err
	}
	return fmt.Errorf("%w: %s", err, msg)
}
