package tidecli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/tm/debug"
	"github.com/tidestream/tide/tm/netplane"
	"github.com/tidestream/tide/tm/worker"
)

func taskManagerCommand() *cli.Command {
	return &cli.Command{
		Name:  "taskmanager",
		Usage: "run a TaskManager that joins the AM",
		Description: `Starts a TaskManager with taskmanager.numberOfTaskSlots slots and registers it with the
AM at jobmanager.rpc.address:jobmanager.rpc.port, retrying with backoff until
--connect-timeout passes. Its node id is the host name unless taskmanager.node-id is set.
SIGTERM unregisters it and exits cleanly.

` + dynamicHelp,
		Flags: []cli.Flag{
			configDirFlag(), dynamicFlag(),
			&cli.StringFlag{Name: "resource-id", Usage: "TaskManager id (default <node>-<random>)"},
			&cli.StringFlag{Name: "host", Value: "127.0.0.1", Usage: "address the data plane binds and advertises"},
			&cli.DurationFlag{Name: "connect-timeout", Value: 0, Usage: "give up after the AM is unreachable this long (default 5m)"},
		},
		Action: runTaskManager,
	}
}

func runTaskManager(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	node := conf.TaskManagerNodeID.Get(cfg)
	if node == "" {
		if node, err = os.Hostname(); err != nil {
			return fmt.Errorf("taskmanager.node-id is not set and the host name is unknown: %w", err)
		}
	}
	id := c.String("resource-id")
	if id == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		id = node + "-" + hex.EncodeToString(b[:])
	}
	secret, err := internalSecret(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if addr := conf.TaskManagerDebugPprofAddress.Get(cfg); addr != "" {
		if _, err := debug.ServePprof(ctx, addr, slog.Default().With("taskmanager", id)); err != nil {
			return fmt.Errorf("TaskManager %s: %w", id, err)
		}
	}
	mem := worker.MemoryConfig{ProcessSize: conf.TaskManagerMemoryProcessSize.Get(cfg).Bytes(),
		ManagedSize: conf.TaskManagerMemoryManagedSize.Get(cfg).Bytes(), ManagedFraction: conf.TaskManagerMemoryManagedFraction.Get(cfg)}
	defer worker.StartGCFloor(mem.GCFloor(), slog.Default().With("taskmanager", id))()
	return worker.Run(ctx, worker.Config{
		Memory:         mem,
		PebbleLocalDir: conf.StateBackendPebbleLocalDir.Get(cfg),
		Secret:         secret,
		AMAddress:      net.JoinHostPort(conf.JobManagerRPCAddress.Get(cfg), strconv.Itoa(conf.JobManagerRPCPort.Get(cfg))),
		ID:             id,
		NodeID:         node,
		Slots:          conf.TaskManagerNumberOfTaskSlots.Get(cfg),
		DataAddress:    net.JoinHostPort(c.String("host"), strconv.Itoa(conf.TaskManagerDataPort.Get(cfg))),
		ConnectTimeout: c.Duration("connect-timeout"),
		DataPlane:      dataPlaneOptions(cfg),
		AMAddressFile:  kubeAMAddressFile(),
	})
}

// dataPlaneOptions are the TaskManager's data plane settings: execution.buffer-timeout and
// the network buffers of taskmanager.network.memory.*.
func dataPlaneOptions(cfg *conf.Config) netplane.Options {
	o := netplane.Options{CreditsPerChannel: conf.NetworkBuffersPerChannel.Get(cfg),
		FloatingBuffersPerGate: conf.NetworkFloatingBuffersPerGate.Get(cfg)}
	if o.FloatingBuffersPerGate == 0 {
		o.FloatingBuffersPerGate = -1 // none; the zero value selects netplane's default
	}
	return o.WithBufferTimeout(conf.ExecutionBufferTimeout.Get(cfg))
}
