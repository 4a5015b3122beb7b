package rest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewRESTAuth(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	if err := os.WriteFile(good, []byte("s3cret\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name              string
		bind, token, file string
		required          bool
		wantErr           string
	}{
		{"loopback open", "127.0.0.1", "", "", false, ""},
		{"loopback with token", "127.0.0.1", "t", "", true, ""},
		{"any address without token", "0.0.0.0", "", "", false, "not a loopback address"},
		{"any address with token", "0.0.0.0", "t", "", true, ""},
		{"any address with token file", "0.0.0.0", "", good, true, ""},
		{"both set", "0.0.0.0", "t", good, false, "only one"},
		{"missing file", "0.0.0.0", "", filepath.Join(dir, "nope"), false, "rest.auth.token-file"},
		{"empty file", "0.0.0.0", "", empty, false, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", net.JoinHostPort(tt.bind, "0"))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			a, err := NewAuth(ln, tt.token, tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.required != tt.required {
				t.Fatalf("required = %v, want %v", a.required, tt.required)
			}
		})
	}
}
