package yarn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/ipc"
	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// finishPollInterval is how often Finish asks again until the RM has stored the final state.
const finishPollInterval = 100 * time.Millisecond

// AMRM is an ApplicationMaster's client of the ResourceManager's ApplicationMasterProtocol
// (the scheduler port, yarn.resourcemanager.scheduler.address), authenticated with the
// AMRMToken. It keeps the allocate response id, the blacklist (sent as additions and
// removals with the next allocate) and the NMTokens the RM hands out.
type AMRM struct {
	c      *ipc.Client
	tokens *NMTokenCache
	log    *slog.Logger

	mu         sync.Mutex
	responseID int32
	blacklist  *blacklist
}

// DialAMRM returns a client for the RM scheduler at addr using the AMRMToken token. NMTokens
// from register and allocate responses go into tokens.
func DialAMRM(addr string, token security.Token, tokens *NMTokenCache, log *slog.Logger) (*AMRM, error) {
	if log == nil {
		log = slog.Default()
	}
	if tokens == nil {
		return nil, errors.New("AMRM client: no NMToken cache")
	}
	c, err := ipc.New(ipc.Config{Addr: addr, Protocol: ProtocolApplicationMaster, Token: &token, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("AMRM client for scheduler %s: %w", addr, err)
	}
	return &AMRM{c: c, tokens: tokens, log: log, blacklist: newBlacklist()}, nil
}

// Close closes the connection.
func (a *AMRM) Close() error { return a.c.Close() }

func (a *AMRM) call(ctx context.Context, method string, req, resp proto.Message) error {
	if err := a.c.Call(ctx, method, req, resp); err != nil {
		return wrapRM(a.c.Addr(), method, err)
	}
	return nil
}

// Register registers the AM (host, RPC port and the tracking URL the RM's web proxy links
// to). It resets the response id and, for a re-registration after AM_RESYNC, makes the next
// allocate send the whole blacklist again. NMTokens for containers kept from earlier attempts
// go into the cache.
func (a *AMRM) Register(ctx context.Context, host string, rpcPort int32, trackingURL string) (*yarnpb.RegisterApplicationMasterResponseProto, error) {
	resp := &yarnpb.RegisterApplicationMasterResponseProto{}
	err := a.call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{
		Host: proto.String(host), RpcPort: proto.Int32(rpcPort), TrackingUrl: proto.String(trackingURL),
	}, resp)
	if err != nil {
		return nil, err
	}
	a.tokens.PutAll(resp.GetNmTokensFromPreviousAttempts())
	a.mu.Lock()
	a.responseID = 0
	a.blacklist.resync()
	a.mu.Unlock()
	a.log.Info("yarn: registered application master", "queue", resp.GetQueue(),
		"max_memory_mb", resp.GetMaximumCapability().GetMemory(), "max_vcores", resp.GetMaximumCapability().GetVirtualCores(),
		"containers_from_previous_attempts", len(resp.GetContainersFromPreviousAttempts()))
	return resp, nil
}

// UpdateBlacklist records nodes to add to and remove from the application's blacklist; the
// next Allocate sends the change. Entries are node names as the scheduler sees them (host, or
// host:port with yarn.scheduler.include-port-in-node-name) or racks; "*" is refused.
func (a *AMRM) UpdateBlacklist(additions, removals []string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.blacklist.update(additions, removals)
}

// Blacklisted returns the application's whole blacklist, sorted.
func (a *AMRM) Blacklisted() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.blacklist.nodes()
}

// AllocateRequest is what one heartbeat asks for.
type AllocateRequest struct {
	// Asks are absolute: the latest count per (priority, resource name, capability) replaces
	// the pending one; send a key only when its count changes, 0 to cancel.
	Asks     []*yarnpb.ResourceRequestProto
	Releases []*yarnpb.ContainerIdProto
	Progress float32
}

// Allocate sends one heartbeat with the pending blacklist change. NMTokens in the answer go
// into the cache; a rolled AMRMToken replaces the current one (the next call reconnects with
// it). An AM_RESYNC command comes back in the response; ErrNotRegistered means the same.
// Either way the AM must Register again and resend its asks.
func (a *AMRM) Allocate(ctx context.Context, r AllocateRequest) (*yarnpb.AllocateResponseProto, error) {
	a.mu.Lock()
	bl := a.blacklist.take()
	req := &yarnpb.AllocateRequestProto{
		Ask:              r.Asks,
		Release:          r.Releases,
		BlacklistRequest: bl,
		ResponseId:       proto.Int32(a.responseID),
		Progress:         proto.Float32(r.Progress),
	}
	a.mu.Unlock()
	resp := &yarnpb.AllocateResponseProto{}
	if err := a.call(ctx, "allocate", req, resp); err != nil {
		if bl != nil {
			a.mu.Lock()
			a.blacklist.restore(bl)
			a.mu.Unlock()
		}
		return nil, err
	}
	if bl != nil {
		a.log.Info("yarn: blacklist updated", "added", bl.GetBlacklistAdditions(), "removed", bl.GetBlacklistRemovals())
	}
	a.mu.Lock()
	a.responseID = resp.GetResponseId()
	a.mu.Unlock()
	a.tokens.PutAll(resp.GetNmTokens())
	if t := resp.GetAmRmToken(); t != nil {
		a.log.Info("yarn: AMRMToken rolled over; reconnecting with the new one")
		a.c.SetToken(security.TokenFromProto(t))
	}
	return resp, nil
}

// Finish unregisters the AM with its final status, asking again until the RM confirms it has
// stored the final state.
func (a *AMRM) Finish(ctx context.Context, status yarnpb.FinalApplicationStatusProto, diagnostics, trackingURL string) error {
	req := &yarnpb.FinishApplicationMasterRequestProto{
		FinalApplicationStatus: status.Enum(),
		Diagnostics:            proto.String(diagnostics),
		TrackingUrl:            proto.String(trackingURL),
	}
	for {
		resp := &yarnpb.FinishApplicationMasterResponseProto{}
		if err := a.call(ctx, "finishApplicationMaster", req, resp); err != nil {
			return fmt.Errorf("unregistering with status %v: %w", status, err)
		}
		if resp.GetIsUnregistered() {
			return nil
		}
		t := time.NewTimer(finishPollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("unregistering with status %v: the RM had not stored the final state: %w", status, context.Cause(ctx))
		case <-t.C:
		}
	}
}
