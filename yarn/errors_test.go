package yarn

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/ipc"
	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/yarn/yarnpb"
)

func TestWrapRM(t *testing.T) {
	remote := func(class, msg string) error { return &ipc.RemoteError{Class: class, Message: msg} }
	tests := []struct {
		err  error
		want error
	}{
		{fmt.Errorf("x: %w", ipc.ErrUnreachable), ErrRMUnreachable},
		{remote(classApplicationNotFound, "Application with id 'application_1_0001' doesn't exist in RM."), ErrApplicationNotFound},
		{remote(classInvalidResourceRequest, "Invalid resource request, requested resource type=[memory-mb] < 0 or greater than maximum allowed allocation."), ErrResourceTooLarge},
		{remote(classAMNotRegistered, "not registered"), ErrNotRegistered},
	}
	for _, tt := range tests {
		got := wrapRM("rm:8032", "call", tt.err)
		if !errors.Is(got, tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("wrapRM(%v) = %v, want it to wrap %v", tt.err, got, tt.want)
		}
	}
	other := remote("java.io.IOException", "x")
	if got := wrapRM("rm:8032", "call", other); errors.Is(got, ErrResourceTooLarge) || !errors.Is(got, other) {
		t.Errorf("wrapRM(other) = %v", got)
	}
}

func TestCheckFits(t *testing.T) {
	max := &yarnpb.ResourceProto{Memory: proto.Int64(2048), VirtualCores: proto.Int32(4)}
	for _, tt := range []struct {
		mem   int64
		cores int32
		ok    bool
	}{{2048, 4, true}, {64, 1, true}, {2049, 1, false}, {64, 5, false}} {
		err := CheckFits(&yarnpb.ResourceProto{Memory: proto.Int64(tt.mem), VirtualCores: proto.Int32(tt.cores)}, max)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrResourceTooLarge)) {
			t.Errorf("CheckFits(%d MB, %d vcores) = %v", tt.mem, tt.cores, err)
		}
	}
	if err := CheckFits(max, nil); err != nil {
		t.Errorf("nil max: %v", err)
	}
}

func TestNMTokenCache(t *testing.T) {
	c := NewNMTokenCache()
	node := &yarnpb.NodeIdProto{Host: proto.String("h"), Port: proto.Int32(1)}
	c.PutAll([]*yarnpb.NMTokenProto{
		{NodeId: node, Token: security.Token{Identifier: []byte{1}, Password: []byte{2}, Kind: security.KindNMToken}.Proto()},
		{NodeId: node}, // no token: ignored
	})
	tok, ok := c.Get("h:1")
	if !ok || tok.Identifier[0] != 1 || c.Len() != 1 {
		t.Fatalf("Get = %v, %v", tok, ok)
	}
	c.Put("h:1", security.Token{Identifier: []byte{9}})
	if tok, _ := c.Get("h:1"); tok.Identifier[0] != 9 {
		t.Errorf("newer token not kept: %v", tok)
	}
	c.Remove("h:1")
	if _, ok := c.Get("h:1"); ok {
		t.Error("token still there after Remove")
	}
}

func TestNMWithoutTokenFails(t *testing.T) {
	nm := NewNM(NewNMTokenCache(), nil)
	defer nm.Close()
	_, err := nm.ContainerStatus(testCtx(t), "h:1", &yarnpb.ContainerIdProto{})
	if err == nil {
		t.Fatal("call without an NMToken succeeded")
	}
}
