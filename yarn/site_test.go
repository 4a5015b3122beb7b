package yarn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleSite = `<?xml version="1.0" encoding="UTF-8" standalone="no"?><configuration>
<property><name>yarn.resourcemanager.address</name><value>localhost:40417</value><source>programmatically</source></property>
<property><name>yarn.resourcemanager.scheduler.address</name><value> localhost:34953 </value></property>
<property><name>yarn.scheduler.include-port-in-node-name</name><value>true</value></property>
<property><name></name><value>ignored</value></property>
</configuration>`

func TestParseSite(t *testing.T) {
	s, err := ParseSite(strings.NewReader(sampleSite))
	if err != nil {
		t.Fatal(err)
	}
	c, sch := s.RMAddresses()
	if c != "localhost:40417" || sch != "localhost:34953" || s["yarn.scheduler.include-port-in-node-name"] != "true" || len(s) != 3 {
		t.Fatalf("got %v; addresses %s %s", s, c, sch)
	}
	for _, bad := range []string{"", "<configuration>", "<other/>", "<configuration><property><name>a</name></property"} {
		if _, err := ParseSite(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseSite(%q) accepted", bad)
		}
	}
}

func TestRMAddressesDefaults(t *testing.T) {
	tests := []struct {
		site         SiteConfig
		client, sche string
	}{
		{SiteConfig{}, "0.0.0.0:8032", "0.0.0.0:8030"},
		{SiteConfig{"yarn.resourcemanager.hostname": "rm"}, "rm:8032", "rm:8030"},
		{SiteConfig{"yarn.resourcemanager.hostname": "rm", "yarn.resourcemanager.address": "x:1"}, "x:1", "rm:8030"},
	}
	for _, tt := range tests {
		c, s := tt.site.RMAddresses()
		if c != tt.client || s != tt.sche {
			t.Errorf("%v: got %s %s, want %s %s", tt.site, c, s, tt.client, tt.sche)
		}
	}
}

func TestLoadYarnSite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(sampleSite), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"YARN_CONF_DIR": t.TempDir(), "HADOOP_CONF_DIR": dir}
	s, path, err := LoadYarnSite(func(k string) string { return env[k] })
	if err != nil || path != filepath.Join(dir, "yarn-site.xml") || s["yarn.resourcemanager.address"] != "localhost:40417" {
		t.Fatalf("got %v %q %v", s, path, err)
	}
	if _, _, err := LoadYarnSite(func(string) string { return "" }); !isErr(err, ErrNoYarnSite) {
		t.Fatalf("no dirs: %v", err)
	}
}

func FuzzParseSite(f *testing.F) {
	f.Add(sampleSite)
	f.Add("<configuration/>")
	f.Fuzz(func(t *testing.T, s string) {
		site, err := ParseSite(strings.NewReader(s))
		if err != nil {
			return
		}
		for k := range site {
			if k == "" || strings.TrimSpace(k) != k {
				t.Fatalf("bad key %q", k)
			}
		}
		site.RMAddresses()
	})
}
