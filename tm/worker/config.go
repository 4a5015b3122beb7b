package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/tm/netplane"
)

// Config configures one TaskManager.
type Config struct {
	// AMAddress is host:port of the AM's RPC endpoint (jobmanager.rpc.address/port).
	AMAddress string
	// AMAddressFile is the URI of a file naming host:port of the AM (hdfs://… or
	// file://…), rewritten by every AM attempt once it listens. When set, every
	// connection attempt after the first (and after losing the AM) re-reads it and dials
	// what it names, so a TaskManager follows a restarted AM to its new address; an
	// unreadable file leaves the last address in use. Empty: $TIDE_AM_ADDRESS_FILE,
	// else AMAddress only.
	AMAddressFile string
	// ID names the TaskManager (unique per process); NodeID names its machine.
	ID     string
	NodeID string
	// Slots is taskmanager.numberOfTaskSlots.
	Slots int
	// DataAddress is where the data plane listens ("127.0.0.1:0" picks a port).
	DataAddress string
	// BuildID is sent to the AM, which refuses other builds; empty uses rpc.BuildID().
	BuildID string
	// ConnectTimeout bounds how long the TaskManager keeps trying to reach the AM, at
	// start and after losing it, before it gives up and exits.
	ConnectTimeout time.Duration
	// InitialBackoff and MaxBackoff pace connection attempts (doubling from the first to
	// the second). The first pause is short (2 ms by default): TaskManagers are often
	// started together with their AM, and one that comes up a few milliseconds before the
	// AM listens should register within a few milliseconds of it.
	InitialBackoff, MaxBackoff time.Duration
	Logger                     *slog.Logger
	// Secret is the internal secret (security.internal.secret-file, ...): the TaskManager
	// proves it to the AM and to other TaskManagers' data planes, and requires the same of
	// them. Required when the data plane listens off loopback.
	Secret clusterauth.Secret
	// Memory is taskmanager.memory.*: managed memory bounds the pebble state backend's
	// block cache and memtables (one budget for the TaskManager).
	Memory MemoryConfig
	// PebbleLocalDir is the TaskManager's state.backend.pebble.localdir (empty: the temp
	// directory), cleaned of stale instance directories at start.
	PebbleLocalDir string
	// DataPlane tunes the data plane (execution.buffer-timeout through
	// netplane.Options.WithBufferTimeout: the TaskManager's own value, used only when the AM
	// sends none; the job's value from the AM wins and can be reloaded); its Logger and
	// Secret are taken from this Config.
	DataPlane netplane.Options
}

func (c *Config) validate() error {
	var errs []error
	if c.AMAddress == "" {
		errs = append(errs, errors.New("AM address is empty: set jobmanager.rpc.address and jobmanager.rpc.port"))
	}
	if c.ID == "" {
		errs = append(errs, errors.New("TaskManager id is empty"))
	}
	if c.NodeID == "" {
		errs = append(errs, errors.New("node id is empty: set taskmanager.node-id"))
	}
	if c.Slots < 1 {
		errs = append(errs, fmt.Errorf("taskmanager.numberOfTaskSlots = %d: expected at least 1", c.Slots))
	}
	if err := c.Memory.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *Config) withDefaults() {
	if c.DataAddress == "" {
		c.DataAddress = "127.0.0.1:0"
	}
	if c.BuildID == "" {
		c.BuildID = rpc.BuildID()
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Minute
	}
	if c.InitialBackoff <= 0 {
		c.InitialBackoff = 2 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 5 * time.Second
	}
	if c.AMAddressFile == "" {
		c.AMAddressFile = os.Getenv(EnvAMAddressFile)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}
