package yarn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/storage"
)

// Keys of the YARN driver, read from the configuration the AM runs with; conf/options.go
// declares and validates them.
const (
	// KeyHeartbeat is Flink's yarn.heartbeat.interval: the allocate interval while nothing
	// is pending (default 5 s).
	KeyHeartbeat = "yarn.heartbeat.interval"
	// KeyFastHeartbeat is Flink's yarn.heartbeat.container-request-interval: the allocate
	// interval while containers are pending (default 500 ms).
	KeyFastHeartbeat = "yarn.heartbeat.container-request-interval"
	// KeyNodeIDFormat is tide's tide.yarn.node-id-format: "host" (default; node ids and
	// blacklist entries are host names) or "host-port" (NodeIds host:port, for clusters
	// running several NodeManagers per host with
	// yarn.scheduler.include-port-in-node-name=true, such as MiniYARNCluster).
	KeyNodeIDFormat = "tide.yarn.node-id-format"
)

// envAMAddressFile is where a TaskManager finds the file naming the current AM's address
// (tm/worker.EnvAMAddressFile).
const envAMAddressFile = "TIDE_AM_ADDRESS_FILE"

// InContainer reports whether this process is an AM that tide run started in a YARN
// container (it finds the scheduler's address in its environment).
func InContainer() bool { return os.Getenv(EnvSchedulerAddress) != "" }

// NewDriverFromConf assembles the YARN driver of an AM running in a YARN container from
// the configuration and the environment tide run gave the container: the AMRM token, the
// scheduler and client addresses, the TaskManagers' resources and launch environment, the
// staging directory's attempt records. rpc and rest are where the AM listens; tmTokens is
// the credentials blob (the internal secret) every TaskManager container gets.
func NewDriverFromConf(cfg *conf.Config, rpc, rest net.Addr, tmTokens []byte, log *slog.Logger) (*Driver, error) {
	if log == nil {
		log = slog.Default()
	}
	sched := os.Getenv(EnvSchedulerAddress)
	if sched == "" {
		return nil, fmt.Errorf("not in a YARN container started by tide run: %s is not set", EnvSchedulerAddress)
	}
	creds, err := security.LoadCredentialsFromEnv()
	if err != nil {
		return nil, err
	}
	tok, err := creds.AMRMToken()
	if err != nil {
		return nil, err
	}
	res, err := DecodeResources(os.Getenv(EnvResources))
	if err != nil {
		return nil, err
	}
	heartbeat, err := durationKey(cfg, KeyHeartbeat, 5*time.Second)
	if err != nil {
		return nil, err
	}
	fast, err := durationKey(cfg, KeyFastHeartbeat, 500*time.Millisecond)
	if err != nil {
		return nil, err
	}
	format, _ := cfg.Value(KeyNodeIDFormat)
	nodeIDs, err := ParseNodeIDFormat(format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyNodeIDFormat, err)
	}
	usr := os.Getenv(EnvUser)
	rpcHost, rpcPortStr, err := net.SplitHostPort(rpc.String())
	if err != nil {
		return nil, fmt.Errorf("the AM's RPC address %s: %w", rpc, err)
	}
	rpcPort, _ := strconv.Atoi(rpcPortStr)
	slots := conf.TaskManagerNumberOfTaskSlots.Get(cfg)
	vcores := conf.YarnContainersVcores.Get(cfg)
	if vcores <= 0 {
		vcores = slots
	}
	tokens := NewNMTokenCache()
	amrm, err := DialAMRM(sched, tok, tokens, log)
	if err != nil {
		return nil, err
	}
	var nodes NodeLister
	if rmAddr := os.Getenv(EnvRMAddress); rmAddr != "" {
		rm, err := DialClientRM(rmAddr, usr, log)
		if err != nil {
			amrm.Close()
			return nil, err
		}
		nodes = ClusterNodes{RM: rm}
	}
	launch := TaskManagerLaunch{
		Resources: res, AMHost: rpcHost, AMPort: rpcPort,
		Env:    map[string]string{"HADOOP_USER_NAME": usr, "TIDE_LOG_LEVEL": os.Getenv("TIDE_LOG_LEVEL")},
		Tokens: tmTokens,
	}
	if fs := os.Getenv(storage.EnvDefaultFS); fs != "" {
		launch.Env[storage.EnvDefaultFS] = fs // hdfs:/// paths (outputs, checkpoints) in TaskManagers
	}
	if os.Getenv("HADOOP_CONF_DIR") == ShippedHadoopConfDir {
		launch.Env["HADOOP_CONF_DIR"] = ShippedHadoopConfDir // the shipped core-site.xml, hdfs-site.xml
	}
	var records AttemptRecords
	if rec := stagingRecords(usr, log); rec != nil {
		records = rec
		launch.Env[envAMAddressFile] = rec.AMAddressURI()
	}
	d, err := NewDriver(DriverConfig{
		Scheduler: amrm, Containers: NewNM(tokens, log), Nodes: nodes,
		Host: rpcHost, RPCPort: rpcPort, TrackingURL: "http://" + rest.String(),
		MemoryMB: conf.TaskManagerMemoryProcessSize.Get(cfg).Bytes() >> 20, VCores: int32(vcores),
		Launch: launch.Context, NodeIDs: nodeIDs, AMNode: amNode(),
		Records:   records,
		Heartbeat: heartbeat, FastHeartbeat: fast,
		Logger: log,
	})
	if err != nil {
		amrm.Close()
		for _, r := range []any{nodes, records} {
			if c, ok := r.(io.Closer); ok {
				c.Close()
			}
		}
		return nil, err
	}
	if self, err := ParseContainerID(os.Getenv("CONTAINER_ID")); err == nil {
		d.SetAttempt(strconv.Itoa(int(self.GetAppAttemptId().GetAttemptId())))
		log.Info("YARN AM attempt", "attempt", AttemptIDString(self.GetAppAttemptId()), "container", os.Getenv("CONTAINER_ID"))
	}
	return d, nil
}

// stagingRecords opens the application's staging directory for the records that let a
// later AM attempt keep this attempt's TaskManagers; nil (containers are then replaced on
// an AM restart) when there is none or it cannot be opened.
func stagingRecords(usr string, log *slog.Logger) *StagingStore {
	dir := os.Getenv(EnvStagingDir)
	if dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, err := OpenStagingStore(ctx, dir, usr)
	if err != nil {
		log.Error("the staging directory cannot keep TaskManagers across AM attempts", "dir", dir, "err", err)
		return nil
	}
	return rec
}

// durationKey reads an undeclared duration key, with a default when unset.
func durationKey(c *conf.Config, key string, def time.Duration) (time.Duration, error) {
	raw, ok := c.Value(key)
	if !ok || strings.TrimSpace(raw) == "" {
		return def, nil
	}
	d, err := conf.ParseDuration(raw)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s = %q: expected a positive duration such as \"500 ms\" or \"5 s\"", key, raw)
	}
	return d, nil
}

// amNode is this container's NodeManager as a NodeId host:port (NM_HOST and NM_PORT are set
// in every YARN container); "" outside one.
func amNode() string {
	h, p := os.Getenv("NM_HOST"), os.Getenv("NM_PORT")
	if h == "" || p == "" {
		return ""
	}
	return net.JoinHostPort(h, p)
}
