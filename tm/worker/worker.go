package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/localstate"
	"github.com/tidestream/tide/tm/netplane"
)

// registrationReplyTimeout bounds the wait for Registered/Rejected after Register.
const registrationReplyTimeout = 30 * time.Second

// reconnectMaxBackoff caps the pause between attempts to reach a lost AM: while it is
// away nothing can be checkpointed or assigned, so a TaskManager looks for the new AM at
// least this often (Config.MaxBackoff still caps the first connection).
const reconnectMaxBackoff = time.Second

// Run runs a TaskManager until ctx ends (SIGTERM: it unregisters and exits cleanly, nil),
// the AM disconnects it (nil), the AM rejects it (ErrRejected) or the AM stays
// unreachable for cfg.ConnectTimeout (ErrAMUnreachable).
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("configure TaskManager %s: %w", cfg.ID, err)
	}
	cfg.withDefaults()
	log := cfg.Logger.With("taskmanager", cfg.ID, "node", cfg.NodeID)
	popts := cfg.DataPlane
	popts.Logger, popts.Secret = log, cfg.Secret
	plane, err := netplane.Listen(ctx, cfg.DataAddress, popts)
	if err != nil {
		return fmt.Errorf("TaskManager %s: start data plane: %w", cfg.ID, err)
	}
	defer plane.Close()
	perChannel, floating := plane.Credits()
	log.Info("TaskManager started", "slots", cfg.Slots, "dataAddress", plane.Addr(), "am", cfg.AMAddress, "build", cfg.BuildID,
		"internal_auth", cfg.Secret.Set(), "buffers_per_channel", perChannel, "floating_buffers_per_gate", floating)
	mem, err := openMemory(cfg.Memory, cfg.Slots, log)
	if err != nil {
		return fmt.Errorf("TaskManager %s: %w", cfg.ID, err)
	}
	if mem != nil {
		defer mem.Close()
	}
	w := &worker{cfg: cfg, log: log, plane: plane, am: cfg.AMAddress, memory: mem, cleaned: map[string]bool{}}
	w.cleanPebbleDir(cfg.PebbleLocalDir)
	if cfg.AMAddressFile != "" {
		if w.addrFile, err = newAddressFile(cfg.AMAddressFile); err != nil {
			return fmt.Errorf("configure TaskManager %s: %w", cfg.ID, err)
		}
		w.addrFile.opts = storage.Options{Logger: log}
		defer w.addrFile.close()
		log.Info("following the AM address file across AM restarts", "file", cfg.AMAddressFile)
	}
	defer w.deleteLocalStores() // after run: the held job's subtasks are closed then
	return w.run(ctx)
}

type worker struct {
	cfg      Config
	log      *slog.Logger
	plane    *netplane.Plane
	am       string          // the AM's address now; the address file may move it
	addrFile *addressFile    // nil without Config.AMAddressFile
	memory   *state.Memory   // managed memory of the pebble instances (nil: none configured)
	cleaned  map[string]bool // pebble local directories already cleaned of stale instances
	// localStores are the local state stores by root (state_backend.go), one per root.
	localStores map[string]*localstate.Store
	// held is the job whose subtasks run here; it survives losing the AM (nil: none).
	held *heldJob
}

// addressFileReadTimeout bounds one read of the AM address file.
const addressFileReadTimeout = 10 * time.Second

// followAddressFile points the next connection attempt at the address the AM address
// file names now; an unreadable file leaves the current address.
func (w *worker) followAddressFile(ctx context.Context) {
	if w.addrFile == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, addressFileReadTimeout)
	defer cancel()
	addr, err := w.addrFile.read(rctx)
	switch {
	case err != nil:
		w.log.Warn("cannot read the AM address file; trying the last address", "am", w.am, "err", err)
	case addr != w.am:
		w.log.Info("the AM address file names another AM; following it", "from", w.am, "to", addr)
		w.am = addr
	}
}

// outcome is how a served session ended.
type outcome int

const (
	outcomeLost         outcome = iota // the stream broke: reconnect
	outcomeDisconnected                // the AM told us to go
	outcomeStopped                     // ctx ended (SIGTERM)
)

func (w *worker) run(ctx context.Context) error {
	defer w.closeHeld()
	deadline := time.Now().Add(w.cfg.ConnectTimeout)
	backoff := w.cfg.InitialBackoff
	lost := false // the AM was lost: reconnecting, not connecting
	for attempt, first := 1, true; ; attempt++ {
		if !first {
			w.followAddressFile(ctx)
		}
		first = false
		conn, err := w.connect(ctx)
		if err == nil {
			out, err := w.serve(ctx, conn)
			switch {
			case err != nil:
				return err
			case out == outcomeDisconnected, out == outcomeStopped:
				return nil
			}
			// Lost the AM: try to get back for another ConnectTimeout, at least once a
			// second (reconnectMaxBackoff), so the subtasks kept running meet the new AM
			// soon after it starts.
			deadline = time.Now().Add(w.cfg.ConnectTimeout)
			backoff, attempt, lost = w.cfg.InitialBackoff, 0, true
			continue
		}
		if errors.Is(err, ErrRejected) {
			w.log.Error("the AM rejected this TaskManager; exiting", "am", w.am, "err", err)
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("TaskManager %s: %w at %s after %d attempts over %s: %w",
				w.cfg.ID, ErrAMUnreachable, w.am, attempt, w.cfg.ConnectTimeout, err)
		}
		// Within the first second of a first connection the AM is most likely still
		// starting (started together with this TaskManager): not worth a warning.
		level := slog.LevelWarn
		if !lost && time.Until(deadline) > w.cfg.ConnectTimeout-time.Second {
			level = slog.LevelInfo
		}
		w.log.Log(ctx, level, "cannot reach the AM; retrying", "am", w.am, "attempt", attempt,
			"retryIn", backoff, "giveUpIn", time.Until(deadline).Round(time.Second), "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil
		}
		backoff = min(2*backoff, w.cfg.MaxBackoff)
		if lost {
			backoff = min(backoff, reconnectMaxBackoff)
		}
	}
}

// connection is a registered stream to the AM.
type connection struct {
	cc         *grpc.ClientConn
	stream     rpc.JobManager_ConnectClient
	cancel     context.CancelFunc
	registered *rpc.Registered
	// reported are the subtasks offered to the AM on registration (kept from a lost AM).
	reported []*rpc.FailoverTask
}

func (c *connection) close() {
	c.cancel()
	_ = c.cc.Close()
}

// register sends the Register message on c's new stream, with the subtasks kept from a
// lost AM.
func (w *worker) register(c *connection) error {
	register := &rpc.Register{TaskManagerId: w.cfg.ID, NodeId: w.cfg.NodeID, Slots: int32(w.cfg.Slots),
		BuildId: w.cfg.BuildID, DataAddress: w.plane.Addr()}
	if h := w.held; h != nil {
		h.relay.with(func(b *taskBook) {
			c.reported = b.report()
			register.FailoverHighestCheckpoint = b.highestCheckpoint
		})
		register.FailoverTasks, register.FailoverJobId = c.reported, h.jobID
	}
	return c.stream.Send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_Register{Register: register}})
}

// connect dials the AM, checks its proof of the internal secret (when this TaskManager
// holds one), registers and waits for the answer.
func (w *worker) connect(ctx context.Context) (*connection, error) {
	cc, err := grpc.NewClient(w.am, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial AM %s: %w", w.am, err)
	}
	// The stream outlives ctx: on SIGTERM the TaskManager still sends Unregister on it.
	// Until registration is answered, ctx ending aborts the attempt.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopAbort := context.AfterFunc(ctx, cancel)
	defer stopAbort()
	c := &connection{cc: cc, cancel: cancel}
	proof, err := clusterauth.NewClientProof(w.cfg.Secret)
	if err != nil {
		c.close()
		return nil, err
	}
	stream, err := rpc.NewJobManagerClient(cc).Connect(proof.Context(sctx))
	if err != nil {
		c.close()
		return nil, fmt.Errorf("open stream to AM %s: %w", w.am, err)
	}
	c.stream = stream
	refused := false // the AM ended the stream at once: Recv below says why
	if proof != nil {
		// Check the AM's proof (its headers, sent before it reads anything) before
		// registering: an AM that cannot prove the secret must not count this
		// TaskManager's slots, even for the moment until it notices the stream close.
		timer := time.AfterFunc(registrationReplyTimeout, cancel)
		hdr, _ := stream.Header()
		timer.Stop()
		if hdr == nil {
			refused = true
		} else if err := proof.CheckServer(hdr, w.am); err != nil {
			c.close()
			return nil, fmt.Errorf("TaskManager %s: %w: %w", w.cfg.ID, ErrRejected, err)
		}
	}
	if !refused {
		if err := w.register(c); err != nil {
			c.close()
			return nil, fmt.Errorf("register with AM %s: %w", w.am, err)
		}
	}
	timer := time.AfterFunc(registrationReplyTimeout, cancel)
	first, err := stream.Recv()
	timer.Stop()
	if err != nil {
		c.close()
		if clusterauth.IsUnauthenticated(err) {
			// Retrying cannot help: the secrets differ. Exit with the AM's reason.
			return nil, fmt.Errorf("TaskManager %s: %w: %s", w.cfg.ID, ErrRejected, status.Convert(err).Message())
		}
		return nil, fmt.Errorf("await registration answer from AM %s: %w", w.am, err)
	}
	switch k := first.GetKind().(type) {
	case *rpc.JobManagerMessage_Registered:
		c.registered = k.Registered
		return c, nil
	case *rpc.JobManagerMessage_Rejected:
		c.close()
		return nil, fmt.Errorf("TaskManager %s: %w: %s", w.cfg.ID, ErrRejected, k.Rejected.GetReason())
	default:
		c.close()
		return nil, fmt.Errorf("AM %s answered Register with %T: expected Registered or Rejected", w.am, k)
	}
}
