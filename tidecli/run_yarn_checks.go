package tidecli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/yarn"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// hadoopConfFiles are the client's core-site.xml and hdfs-site.xml under $HADOOP_CONF_DIR
// (those that exist): tide run ships them to every container.
func hadoopConfFiles() []string {
	dir := os.Getenv("HADOOP_CONF_DIR")
	if dir == "" {
		return nil
	}
	var out []string
	for _, name := range yarn.HadoopConfFiles {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// qualifyHDFS fills the namenode of an unqualified hdfs:///path from defaultFS
// (hdfs://namenode:port), so the shipped configuration and the AM's logs name the cluster
// the client meant. Anything else comes back unchanged.
func qualifyHDFS(uri, defaultFS string) string {
	if defaultFS == "" || !strings.HasPrefix(uri, "hdfs:///") {
		return uri
	}
	return strings.TrimRight(defaultFS, "/") + strings.TrimPrefix(uri, "hdfs://")
}

// submissionWarnings are what tide run says before submitting, about settings that work but
// rarely as meant: a checkpoint directory without an interval (checkpointing stays off, as
// in Flink) and NodeManagers that share a node id (a block of one blocks them all).
func submissionWarnings(ctx context.Context, cfg *conf.Config, rm *yarn.ClientRM) []string {
	var out []string
	if cfg.IsSet(conf.CheckpointsDir.Key()) && !cfg.IsSet(conf.CheckpointingInterval.Key()) {
		out = append(out, fmt.Sprintf("%s is set but %s is not: checkpointing is off (as in Flink), so a new AM attempt or a rescale starts the job over; set e.g. -D%s=10s",
			conf.CheckpointsDir.Key(), conf.CheckpointingInterval.Key(), conf.CheckpointingInterval.Key()))
	}
	nodes, err := rm.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_RUNNING)
	if err != nil {
		return out // the submission itself will say what is wrong with the RM
	}
	raw, _ := cfg.Value(yarn.KeyNodeIDFormat)
	format, err := yarn.ParseNodeIDFormat(raw)
	if err != nil {
		return append(out, fmt.Sprintf("%s: %v", yarn.KeyNodeIDFormat, err))
	}
	if w := nodeIDCollisions(format, nodes); w != "" {
		out = append(out, w)
	}
	return out
}

// nodeIDCollisions names the node ids that several running NodeManagers map onto under
// format, or "" when every NodeManager has its own.
func nodeIDCollisions(format yarn.NodeIDFormat, nodes []*yarnpb.NodeReportProto) string {
	by := map[string][]string{}
	for _, n := range nodes {
		id := string(format.NodeID(n.GetNodeId()))
		by[id] = append(by[id], yarn.NodeIDString(n.GetNodeId()))
	}
	var shared []string
	for id, nms := range by {
		if len(nms) > 1 {
			sort.Strings(nms)
			shared = append(shared, fmt.Sprintf("%s (%s)", id, strings.Join(nms, ", ")))
		}
	}
	if len(shared) == 0 {
		return ""
	}
	sort.Strings(shared)
	return fmt.Sprintf("with %s=%s several NodeManagers share a node id: %s; blocking one blocks them all (set -D%s=%s when NodeManagers share a host)",
		yarn.KeyNodeIDFormat, format, strings.Join(shared, "; "), yarn.KeyNodeIDFormat, yarn.NodeIDHostPort)
}

// quietRetries is the staging storage's logger: its retry warnings are demoted to debug, so a
// transient upload error (a broken pipeline or a refused block that the next upload session
// gets past) does not alarm the user; a failure still ends tide run with its error.
func quietRetries() *slog.Logger {
	return slog.New(demoted{slog.Default().Handler()})
}

// demoted is a handler that logs records below ERROR at DEBUG.
type demoted struct{ h slog.Handler }

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelError {
		l = slog.LevelDebug
	}
	return d.h.Enabled(ctx, l)
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		r.Level = slog.LevelDebug
	}
	return d.h.Handle(ctx, r)
}

func (d demoted) WithAttrs(a []slog.Attr) slog.Handler { return demoted{d.h.WithAttrs(a)} }
func (d demoted) WithGroup(n string) slog.Handler      { return demoted{d.h.WithGroup(n)} }
