package security

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
)

// sampleTokenFile is the 69-byte NodeManager-written AM token file annotated in the YARN
// protocol reference (JuliaParallel/Elly.jl test/token/container_tokens).
const sampleTokenFile = "48445453" + "00" + "01" + "00" + "15" +
	"0a0d0a09080d109f81d5b2f32d100110fca7e6b103" +
	"14" + "b1aabc2cb0a9dfb89a17ea5a01bfe921988051a1" +
	"10" + "5941524e5f414d5f524d5f544f4b454e" + "00" + "00"

func TestParseCredentialsSample(t *testing.T) {
	data, _ := hex.DecodeString(sampleTokenFile)
	if len(data) != 69 {
		t.Fatalf("sample is %d bytes, want 69", len(data))
	}
	c, err := ParseCredentials(data)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.AMRMToken()
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(tok.Identifier) != "0a0d0a09080d109f81d5b2f32d100110fca7e6b103" ||
		hex.EncodeToString(tok.Password) != "b1aabc2cb0a9dfb89a17ea5a01bfe921988051a1" ||
		tok.Kind != KindAMRMToken || tok.Service != "" || c.Tokens[0].Alias != "" || len(c.Secrets) != 0 {
		t.Errorf("token %+v", c.Tokens[0])
	}
	if _, err := c.ByKind("HDFS_DELEGATION_TOKEN"); !errors.Is(err, ErrNoToken) {
		t.Errorf("ByKind(missing) = %v", err)
	}
	// Writing it back gives the same bytes.
	if got := c.AppendWritable(nil); !bytes.Equal(got, data) {
		t.Errorf("AppendWritable = %x\nwant %x", got, data)
	}
}

func TestParseCredentialsProtobuf(t *testing.T) {
	p := &hadooppb.CredentialsProto{
		Tokens:  []*hadooppb.CredentialsKVProto{{Alias: proto.String("a"), Token: Token{Identifier: []byte{1}, Password: []byte{2}, Kind: KindNMToken, Service: "h:1"}.Proto()}},
		Secrets: []*hadooppb.CredentialsKVProto{{Alias: proto.String("s"), Secret: []byte("xyz")}},
	}
	body, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	data := append([]byte("HDTS\x01"), protowire.AppendVarint(nil, uint64(len(body)))...)
	data = append(data, body...)
	c, err := ParseCredentials(data)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.ByKind(KindNMToken)
	if err != nil || tok.Service != "h:1" || c.Tokens[0].Alias != "a" || string(c.Secrets["s"]) != "xyz" {
		t.Errorf("credentials %+v, %v", c, err)
	}
	if _, err := ParseCredentials(data[:len(data)-1]); err == nil {
		t.Error("truncated protobuf credentials accepted")
	}
}

func TestParseCredentialsRejects(t *testing.T) {
	sample, _ := hex.DecodeString(sampleTokenFile)
	for name, data := range map[string][]byte{
		"empty":          nil,
		"bad magic":      append([]byte("HDTX"), sample[4:]...),
		"unknown format": append([]byte("HDTS\x07"), sample[5:]...),
		"truncated":      sample[:40],
		"trailing bytes": append(append([]byte{}, sample...), 0),
		"huge count":     []byte("HDTS\x00\x8c\x7f\xff\xff\xff"),
		"negative len":   []byte("HDTS\x00\x01\x00\xff"),
	} {
		if c, err := ParseCredentials(data); err == nil {
			t.Errorf("%s: accepted as %+v", name, c)
		}
	}
}

func TestLoadCredentialsFromEnv(t *testing.T) {
	data, _ := hex.DecodeString(sampleTokenFile)
	p := filepath.Join(t.TempDir(), "container_tokens")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(TokenFileEnv, p)
	c, err := LoadCredentialsFromEnv()
	if err != nil || len(c.Tokens) != 1 {
		t.Fatalf("LoadCredentialsFromEnv = %+v, %v", c, err)
	}
	t.Setenv(TokenFileEnv, "")
	if _, err := LoadCredentialsFromEnv(); err == nil || !strings.Contains(err.Error(), TokenFileEnv) {
		t.Errorf("unset env: %v", err)
	}
	if _, err := LoadCredentialsFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestVLong(t *testing.T) {
	tests := []struct {
		v   int64
		hex string
	}{
		{0, "00"}, {127, "7f"}, {-112, "90"}, {-1, "ff"},
		{128, "8f80"}, {255, "8fff"}, {256, "8e0100"}, {-113, "8770"}, {-129, "8780"},
		{1577164554399, "8a016f3655409f"},
		{1<<63 - 1, "887fffffffffffffff"}, {-1 << 63, "807fffffffffffffff"},
	}
	for _, tt := range tests {
		got := hex.EncodeToString(appendVLong(nil, tt.v))
		if got != tt.hex {
			t.Errorf("appendVLong(%d) = %s, want %s", tt.v, got, tt.hex)
		}
		b, _ := hex.DecodeString(tt.hex)
		v, err := readVLong(bytes.NewReader(b))
		if err != nil || v != tt.v {
			t.Errorf("readVLong(%s) = %d, %v; want %d", tt.hex, v, err, tt.v)
		}
	}
	if _, err := readVLong(bytes.NewReader([]byte{0x8e, 0x01})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short vlong: %v", err)
	}
	if _, err := readVInt(bytes.NewReader([]byte{0x8b, 1, 0, 0, 0, 0})); err == nil {
		t.Error("vint beyond int32 accepted")
	}
}

func FuzzParseCredentials(f *testing.F) {
	sample, _ := hex.DecodeString(sampleTokenFile)
	f.Add(sample)
	f.Add([]byte("HDTS\x01\x00"))
	f.Add([]byte("HDTS\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCredentials(data)
		if err != nil || data[4] != FormatWritable || len(c.Secrets) > 1 {
			return
		}
		// A Writable file that parses re-encodes to a file that parses to the same tokens.
		again, err := ParseCredentials(c.AppendWritable(nil))
		if err != nil {
			t.Fatalf("re-encoded credentials do not parse: %v", err)
		}
		if len(again.Tokens) != len(c.Tokens) {
			t.Fatalf("round trip changed the token count %d → %d", len(c.Tokens), len(again.Tokens))
		}
		for i := range c.Tokens {
			a, b := c.Tokens[i], again.Tokens[i]
			if a.Alias != b.Alias || a.Kind != b.Kind || a.Service != b.Service || !bytes.Equal(a.Identifier, b.Identifier) || !bytes.Equal(a.Password, b.Password) {
				t.Fatalf("round trip changed token %d: %+v → %+v", i, a, b)
			}
		}
	})
}

func FuzzVLong(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(-113))
	f.Add(int64(1 << 40))
	f.Fuzz(func(t *testing.T, v int64) {
		got, err := readVLong(bytes.NewReader(appendVLong(nil, v)))
		if err != nil || got != v {
			t.Fatalf("vlong round trip of %d = %d, %v", v, got, err)
		}
	})
}
