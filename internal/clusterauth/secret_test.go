package clusterauth

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "0123456789abcdef0123\nignored\n", 0o600)
	open := write("open", "0123456789abcdef0123\n", 0o644)
	empty := write("empty", "\n", 0o600)
	short := write("short", "tooshort\n", 0o600)
	tests := []struct {
		name, value, file, env string
		want                   string
		wantErr                string
	}{
		{name: "nothing"},
		{name: "file", file: good, want: "0123456789abcdef0123"},
		{name: "value", value: "  0123456789abcdef  ", want: "0123456789abcdef"},
		{name: "env", env: "0123456789abcdef-env", want: "0123456789abcdef-env"},
		{name: "key beats env", value: "0123456789abcdef-key", env: "0123456789abcdef-env", want: "0123456789abcdef-key"},
		{name: "both keys", value: "0123456789abcdef", file: good, wantErr: "both set"},
		{name: "file readable by others", file: open, wantErr: "chmod 600"},
		{name: "empty file", file: empty, wantErr: "first line is empty"},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErr: KeySecretFile},
		{name: "too short", file: short, wantErr: "at least 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvSecret, tt.env)
			s, _, err := Load(tt.value, tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load = %q, %v; want an error mentioning %q", s, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(s) != tt.want {
				t.Fatalf("Load = %q, %v; want %q", s, err, tt.want)
			}
		})
	}
}

func TestRequire(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 1}
	if err := Require(lo, nil, "x"); err != nil {
		t.Errorf("loopback without a secret: %v", err)
	}
	if err := Require(any, nil, "x"); err == nil || !strings.Contains(err.Error(), KeySecretFile) {
		t.Errorf("0.0.0.0 without a secret: %v", err)
	}
	if err := Require(any, Secret("0123456789abcdef"), "x"); err != nil {
		t.Errorf("0.0.0.0 with a secret: %v", err)
	}
}

// TestServerAuthVerify: a fresh proof passes once; a replay, a stale proof, another secret's
// proof and a malformed header are refused with their reason.
func TestServerAuthVerify(t *testing.T) {
	s := Secret("0123456789abcdef-server")
	a := NewServerAuth(s, nil)
	ctxWith := func(v string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(mdClientProof, v))
	}
	p, err := NewClientProof(s)
	if err != nil {
		t.Fatal(err)
	}
	v := p.md.Get(mdClientProof)[0]
	if _, reason := a.verify(ctxWith(v)); reason != "" {
		t.Fatalf("fresh proof refused: %s", reason)
	}
	if _, reason := a.verify(ctxWith(v)); !strings.Contains(reason, "already used") {
		t.Fatalf("replay: %q", reason)
	}
	other, _ := NewClientProof(Secret("0123456789abcdef-other"))
	if _, reason := a.verify(ctxWith(other.md.Get(mdClientProof)[0])); !strings.Contains(reason, "does not match") {
		t.Fatalf("other secret: %q", reason)
	}
	old := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	nonce := make([]byte, nonceBytes)
	stale := "v1:" + old + ":" + hex.EncodeToString(nonce) + ":" + hex.EncodeToString(s.Proof(labelClient, []byte(old), nonce))
	if _, reason := a.verify(ctxWith(stale)); !strings.Contains(reason, "synchronise the clocks") {
		t.Fatalf("stale: %q", reason)
	}
	if _, reason := a.verify(ctxWith("v1:garbage")); !strings.Contains(reason, "malformed") {
		t.Fatalf("malformed: %q", reason)
	}
	if _, reason := a.verify(context.Background()); !strings.Contains(reason, "sent no proof") {
		t.Fatalf("none: %q", reason)
	}
	// The server's answer convinces only a client with the same secret and nonce.
	p2, _ := NewClientProof(s)
	hdr := metadata.Pairs(mdServerProof, hex.EncodeToString(s.Proof(labelServer, p2.nonce)))
	if err := p2.CheckServer(hdr, "am"); err != nil {
		t.Fatalf("CheckServer: %v", err)
	}
	if err := p.CheckServer(hdr, "am"); err == nil {
		t.Fatal("a proof for another nonce was accepted")
	}
	if err := p2.CheckServer(metadata.MD{}, "am"); err == nil || !strings.Contains(err.Error(), "did not prove") {
		t.Fatalf("no server proof: %v", err)
	}
}
