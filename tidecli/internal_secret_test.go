package tidecli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/internal/hadoop/security"
)

// TestInternalSecretSources: the keys win; in a YARN container without them the secret comes
// from the credentials file the NodeManager wrote (what yarnCredentials encodes).
func TestInternalSecretSources(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "container_tokens")
	if err := os.WriteFile(creds, yarnCredentials(clusterauth.Secret("from-credentials-0123456789")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(security.TokenFileEnv, creds)
	t.Setenv(clusterauth.EnvSecret, "")
	load := func(dyn ...string) string {
		t.Helper()
		cfg, _, err := conf.Load("", dyn)
		if err != nil {
			t.Fatal(err)
		}
		s, err := internalSecret(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return string(s)
	}
	if got := load(); got != "from-credentials-0123456789" {
		t.Errorf("secret from the credentials file = %q", got)
	}
	if got := load("security.internal.secret=from-the-key-0123456789"); got != "from-the-key-0123456789" {
		t.Errorf("secret from the key = %q", got)
	}
	t.Setenv(security.TokenFileEnv, "")
	if got := load(); got != "" {
		t.Errorf("no source gave %q", got)
	}
}

// TestShippedConfigLeavesTheSecretOut: the configuration staged on HDFS for YARN never holds
// the internal secret or the path of a client-side secret file.
func TestShippedConfigLeavesTheSecretOut(t *testing.T) {
	cfg, _, err := conf.Load("", []string{"security.internal.secret=do-not-ship-0123456789", "rest.port=0"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := shippedConfig(cfg, "hdfs:///staging/app")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "security.internal") || strings.Contains(string(b), "do-not-ship") {
		t.Fatalf("staged configuration holds the secret:\n%s", b)
	}
	if !strings.Contains(string(b), "rest.port") {
		t.Fatalf("staged configuration lost other keys:\n%s", b)
	}
}
