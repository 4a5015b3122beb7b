package tidecli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/yarn"
	"github.com/tidestream/tide/yarn/yarnpb"
)

func TestQualifyHDFS(t *testing.T) {
	for _, tc := range []struct{ uri, fs, want string }{
		{"hdfs:///tide/checkpoints", "hdfs://nn:8020", "hdfs://nn:8020/tide/checkpoints"},
		{"hdfs:///tide/checkpoints", "hdfs://nn:8020/", "hdfs://nn:8020/tide/checkpoints"},
		{"hdfs://other:9000/x", "hdfs://nn:8020", "hdfs://other:9000/x"},
		{"file:///x", "hdfs://nn:8020", "file:///x"},
		{"hdfs:///x", "", "hdfs:///x"},
	} {
		if got := qualifyHDFS(tc.uri, tc.fs); got != tc.want {
			t.Errorf("qualifyHDFS(%q, %q) = %q, want %q", tc.uri, tc.fs, got, tc.want)
		}
	}
}

func TestNodeIDCollisions(t *testing.T) {
	node := func(host string, port int32) *yarnpb.NodeReportProto {
		return &yarnpb.NodeReportProto{NodeId: &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)}}
	}
	shared := []*yarnpb.NodeReportProto{node("localhost", 1), node("localhost", 2), node("b", 3)}
	w := nodeIDCollisions(yarn.NodeIDHost, shared)
	if !strings.Contains(w, "localhost (localhost:1, localhost:2)") || strings.Contains(w, "b (") || !strings.Contains(w, "host-port") {
		t.Errorf("host format over two NodeManagers on localhost: %q", w)
	}
	if w := nodeIDCollisions(yarn.NodeIDHostPort, shared); w != "" {
		t.Errorf("host-port format: %q, want no warning", w)
	}
	if w := nodeIDCollisions(yarn.NodeIDHost, []*yarnpb.NodeReportProto{node("a", 1), node("b", 1)}); w != "" {
		t.Errorf("distinct hosts: %q, want no warning", w)
	}
}

// TestQuietRetries: below ERROR the staging storage's log lines come out at DEBUG (hidden at
// the default level), errors stay errors.
func TestQuietRetries(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	q := slog.New(demoted{base.Handler()}).With("storage", "hdfs://nn/x")
	q.Warn("storage: transient error, retrying")
	if buf.Len() != 0 {
		t.Fatalf("a retry warning reached an info-level terminal: %s", buf.String())
	}
	q.Error("upload failed")
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "storage=hdfs://nn/x") {
		t.Fatalf("an error was lost or lost its attributes: %q", buf.String())
	}
	buf.Reset()
	dbg := slog.New(demoted{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})})
	dbg.Warn("storage: transient error, retrying")
	if !strings.Contains(buf.String(), "level=DEBUG") {
		t.Fatalf("at debug level the retry shows as DEBUG: %q", buf.String())
	}
}
