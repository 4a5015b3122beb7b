package yarn

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// The environment tide run gives the AM container (YARN tells an AM neither the scheduler
// address nor where its binary came from).
const (
	EnvRMAddress        = "TIDE_YARN_RM_ADDRESS"        // client port, host:port
	EnvSchedulerAddress = "TIDE_YARN_SCHEDULER_ADDRESS" // scheduler port, host:port
	EnvResources        = "TIDE_YARN_RESOURCES"         // the LocalResources TaskManagers need, encoded
	EnvStagingDir       = "TIDE_YARN_STAGING_DIR"       // hdfs://…/.tide/<appId>
	EnvUser             = "TIDE_YARN_USER"              // the submitting user
)

// BinaryName is the link name of the tide binary in every container's working directory;
// ConfigName that of the effective flink-conf.yaml.
const (
	BinaryName = "tide"
	ConfigName = "flink-conf.yaml"
)

// ShippedHadoopConfDir is HADOOP_CONF_DIR in containers that got the client's Hadoop
// configuration files: their working directory, where the files are linked.
const ShippedHadoopConfDir = "."

// HadoopConfFiles are the client's Hadoop configuration files tide run ships, in the order
// Hadoop reads them.
var HadoopConfFiles = []string{"core-site.xml", "hdfs-site.xml"}

// EncodeResources packs local resources into one environment value.
func EncodeResources(res []*yarnpb.StringLocalResourceMapProto) (string, error) {
	b, err := proto.Marshal(&yarnpb.ContainerLaunchContextProto{LocalResources: res})
	if err != nil {
		return "", fmt.Errorf("encoding local resources: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeResources unpacks EncodeResources's value.
func DecodeResources(s string) ([]*yarnpb.StringLocalResourceMapProto, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: not base64: %w", EnvResources, err)
	}
	var c yarnpb.ContainerLaunchContextProto
	if err := proto.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: not a resource list: %w", EnvResources, err)
	}
	for _, r := range c.GetLocalResources() {
		if r.GetKey() == "" || r.GetValue().GetResource() == nil {
			return nil, fmt.Errorf("%s: resource %q has no name or URL", EnvResources, r.GetKey())
		}
	}
	return c.GetLocalResources(), nil
}

// shellQuote quotes s for bash, which runs YARN container commands.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,:/@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// quoteArg quotes one argument; "$NM_HOST" (the NodeManager's host, set in every
// container) is left for bash to expand.
func quoteArg(a string) string {
	if rest := strings.ReplaceAll(a, "$NM_HOST", ""); rest != a && !strings.ContainsAny(rest, "\"`\\$") {
		return `"` + a + `"`
	}
	return shellQuote(a)
}

// containerCommand is the bash command running the localized binary with args, its
// stdout and stderr in the container's log dir. A localized file keeps the permissions of
// its source, and files written to HDFS are not executable, hence the chmod.
func containerCommand(args []string, logName string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quoteArg(a)
	}
	return fmt.Sprintf("chmod u+x ./%s 2>/dev/null; exec ./%s %s 1><LOG_DIR>/%s.out 2><LOG_DIR>/%s.log",
		BinaryName, BinaryName, strings.Join(q, " "), logName, logName)
}

// TaskManagerLaunch builds TaskManager launch contexts: the binary and configuration
// localized from the staging directory, the AM's address, and the node id the
// TaskManager must report so the blocklist can act on it.
type TaskManagerLaunch struct {
	Resources []*yarnpb.StringLocalResourceMapProto
	AMHost    string
	AMPort    int
	// Dynamic are extra -D properties (key=value) for every TaskManager.
	Dynamic []string
	Env     map[string]string
	// Tokens is a Hadoop credentials blob for every TaskManager container (the internal
	// secret): the NodeManager hands it over as a file only the application's user reads.
	Tokens []byte
}

// Context is the launch context of TaskManager id on node.
func (l TaskManagerLaunch) Context(id core.TaskManagerID, node core.NodeID) *yarnpb.ContainerLaunchContextProto {
	args := []string{"taskmanager", "--configDir", ".", "--resource-id", string(id), "--host", "$NM_HOST"}
	props := append([]string{
		"jobmanager.rpc.address=" + l.AMHost,
		fmt.Sprintf("jobmanager.rpc.port=%d", l.AMPort),
		"taskmanager.node-id=" + string(node),
	}, l.Dynamic...)
	for _, p := range props {
		args = append(args, "-D"+p)
	}
	cmd := containerCommand(args, "taskmanager")
	return &yarnpb.ContainerLaunchContextProto{
		LocalResources: l.Resources,
		Environment:    envProto(l.Env),
		Command:        []string{cmd},
		Tokens:         l.Tokens,
	}
}

func envProto(env map[string]string) []*yarnpb.StringStringMapProto {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*yarnpb.StringStringMapProto, 0, len(keys))
	for _, k := range keys {
		out = append(out, &yarnpb.StringStringMapProto{Key: proto.String(k), Value: proto.String(env[k])})
	}
	return out
}
