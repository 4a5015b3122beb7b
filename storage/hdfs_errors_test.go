package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tidestream/tide/internal/hadoop/ipc"
)

// fakeRemote is a namenode exception as colinmarc/hdfs reports it.
type fakeRemote struct{ exc, msg string }

func (e fakeRemote) Error() string     { return "call failed with ERROR_APPLICATION (" + e.exc + ")" }
func (e fakeRemote) Method() string    { return "addBlock" }
func (e fakeRemote) Desc() string      { return "ERROR_APPLICATION" }
func (e fakeRemote) Exception() string { return e.exc }
func (e fakeRemote) Message() string   { return e.msg }

func TestClassifyHDFS(t *testing.T) {
	pathErr := func(err error) error { return &os.PathError{Op: "create", Path: "/x", Err: err} }
	dnsNotFound := &net.DNSError{Err: "no such host", Name: "nn", IsNotFound: true}
	tests := []struct {
		name     string
		err      error
		lastDial error
		want     class
	}{
		{"space quota", pathErr(fakeRemote{"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException",
			"The DiskSpace quota of /tide/q is exceeded: quota = 4096 B = 4 KB but diskspace consumed = 1048576 B = 1 MB\n\tat x"}),
			nil, class{kind: ErrQuotaExceeded, dir: "/tide/q"}},
		{"namespace quota", fakeRemote{"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException",
			"The NameSpace quota (directories and files) of directory /a/b is exceeded: quota=1 file count=2"},
			nil, class{kind: ErrQuotaExceeded, dir: "/a/b"}},
		{"permission remote", fakeRemote{"org.apache.hadoop.security.AccessControlException", "Permission denied"}, nil, class{kind: ErrPermission}},
		{"permission mapped", pathErr(os.ErrPermission), nil, class{kind: ErrPermission}},
		{"not found", pathErr(os.ErrNotExist), nil, class{kind: ErrNotFound}},
		{"safe mode", fakeRemote{"org.apache.hadoop.hdfs.server.namenode.SafeModeException", "Name node is in safe mode."}, nil, class{transient: true}},
		{"retriable", fakeRemote{"org.apache.hadoop.ipc.RetriableException", ""}, nil, class{transient: true}},
		{"no datanodes yet", fakeRemote{"java.io.IOException", "File /x could only be written to 0 of the 1 minReplication nodes. There are 0 datanode(s) running"}, nil, class{transient: true}},
		{"other IOException", fakeRemote{"java.io.IOException", "something else"}, nil, class{}},
		{"replicating", pathErr(hdfs.ErrReplicating), nil, class{transient: true}},
		{"connection refused", fmt.Errorf("no available namenodes: dial tcp: connect: connection refused"),
			&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, class{transient: true, reconnect: true}},
		{"unknown namenode host", fmt.Errorf("no available namenodes: lookup nn: no such host"), dnsNotFound, class{kind: ErrNoSuchNamenode}},
		{"reset", fmt.Errorf("write: %w", syscall.ECONNRESET), nil, class{transient: true, reconnect: true}},
		{"eof", io.EOF, nil, class{transient: true, reconnect: true}},
		{"closed", net.ErrClosed, nil, class{transient: true, reconnect: true}},
		{"invalid", fmt.Errorf("x: %w", fs.ErrInvalid), nil, class{}},
		{"lease recovery pending", fmt.Errorf("/x after 2m0s: %w", errLeaseRecoveryPending), nil, class{transient: true}},
		{"abandoned upload session", fmt.Errorf("dial: %w", errUploadCut), nil, class{transient: true}},
		{"namenode exception over tide's IPC", fmt.Errorf("recovering: %w", ipcRemote{&ipc.RemoteError{
			Method: "recoverLease", Class: "java.io.FileNotFoundException", Message: "File does not exist: /x"}}), nil, class{kind: ErrNotFound}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyHDFS(tc.err, tc.lastDial); got != tc.want {
				t.Fatalf("classifyHDFS(%v) = %+v, want %+v", tc.err, got, tc.want)
			}
		})
	}
}

func TestDescribeRemote(t *testing.T) {
	err := &os.PathError{Op: "create", Path: "/x", Err: fakeRemote{"java.io.IOException", "first line\n\tat Foo.bar"}}
	got := describeRemote(err)
	if !strings.HasSuffix(got.Error(), ": first line") || !errors.Is(got, err) {
		t.Fatalf("describeRemote = %q, want the first message line appended and the cause kept", got)
	}
	if describeRemote(nil) != nil || describeRemote(io.EOF) != io.EOF {
		t.Fatal("describeRemote changed a nil or non-remote error")
	}
}

func TestBoolResult(t *testing.T) {
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	for _, tc := range []struct {
		name  string
		reply []byte
		v, ok bool
	}{
		{"true", protowire.AppendVarint(tag(1, protowire.VarintType), 1), true, true},
		{"false", protowire.AppendVarint(tag(1, protowire.VarintType), 0), false, true},
		{"other field first", append(protowire.AppendString(tag(2, protowire.BytesType), "x"),
			protowire.AppendVarint(tag(1, protowire.VarintType), 1)...), true, true},
		{"empty", nil, false, false},
		{"truncated varint", append(tag(1, protowire.VarintType), 0x80), false, false},
		{"garbage", []byte{0xff, 0xff, 0xff}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, ok := boolResult(tc.reply); v != tc.v || ok != tc.ok {
				t.Fatalf("boolResult(%x) = %v, %v; want %v, %v", tc.reply, v, ok, tc.v, tc.ok)
			}
		})
	}
}

// FuzzBoolResult feeds arbitrary namenode replies to the reply decoder: it never panics, and
// a reply it accepts re-encodes to the same answer.
func FuzzBoolResult(f *testing.F) {
	f.Add(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1))
	f.Add([]byte{0x12, 0x01, 'x', 0x08, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := boolResult(b)
		if !ok {
			return
		}
		x := uint64(0)
		if v {
			x = 1
		}
		if w, ok := boolResult(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), x)); !ok || w != v {
			t.Fatalf("re-encoded %v decodes as %v, %v", v, w, ok)
		}
	})
}
