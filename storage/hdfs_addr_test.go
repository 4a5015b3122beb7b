package storage

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConf(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, props := range files {
		xml := "<?xml version=\"1.0\"?>\n<configuration>\n" + props + "</configuration>\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func prop(k, v string) string {
	return "<property><name>" + k + "</name><value>" + v + "</value></property>\n"
}

func TestNamenodeAddrs(t *testing.T) {
	defaultFS := writeConf(t, map[string]string{"core-site.xml": prop("fs.defaultFS", "hdfs://nn.example:9000")})
	defaultFSNoPort := writeConf(t, map[string]string{"core-site.xml": prop("fs.defaultFS", "hdfs://nn.example")})
	ha := writeConf(t, map[string]string{
		"core-site.xml": prop("fs.defaultFS", "hdfs://mycluster"),
		"hdfs-site.xml": prop("dfs.nameservices", "mycluster") +
			prop("dfs.namenode.rpc-address.mycluster.nn2", "b:8020") +
			prop("dfs.namenode.rpc-address.mycluster.nn1", "a:8020"),
	})
	empty := writeConf(t, map[string]string{"core-site.xml": ""})
	localFS := writeConf(t, map[string]string{"core-site.xml": prop("fs.defaultFS", "file:///")})
	tests := []struct {
		name, uri, override, confDir string
		envFS                        string
		want                         string
		wantErr                      error
	}{
		{name: "uri host:port", uri: "hdfs://h:1234/x", confDir: empty, want: "h:1234"},
		{name: "uri host default port", uri: "hdfs://h/x", confDir: empty, want: "h:8020"},
		{name: "override wins", uri: "hdfs://h:1/x", override: "o1:1,o2", confDir: empty, want: "o1:1,o2:8020"},
		{name: "fs.defaultFS", uri: "hdfs:///x", confDir: defaultFS, want: "nn.example:9000"},
		{name: "fs.defaultFS without port", uri: "hdfs:///x", confDir: defaultFSNoPort, want: "nn.example:8020"},
		{name: "HA nameservice from defaultFS", uri: "hdfs:///x", confDir: ha, want: "a:8020,b:8020"},
		{name: "HA nameservice in URI", uri: "hdfs://mycluster/x", confDir: ha, want: "a:8020,b:8020"},
		{name: "nothing configured", uri: "hdfs:///x", confDir: empty, wantErr: ErrNoSuchNamenode},
		{name: "defaultFS not hdfs", uri: "hdfs:///x", confDir: localFS, wantErr: errors.New("want hdfs://")},
		{name: "no configuration: " + EnvDefaultFS, uri: "hdfs:///x", confDir: "", envFS: "hdfs://nn.example:9000", want: "nn.example:9000"},
		{name: "fs.defaultFS wins over " + EnvDefaultFS, uri: "hdfs:///x", confDir: defaultFS, envFS: "hdfs://other:1", want: "nn.example:9000"},
		{name: EnvDefaultFS + " not hdfs", uri: "hdfs:///x", confDir: "", envFS: "file:///", wantErr: errors.New(EnvDefaultFS + `="file:///": want hdfs://`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HADOOP_CONF_DIR", tc.confDir)
			t.Setenv("HADOOP_HOME", "")
			t.Setenv(EnvDefaultFS, tc.envFS)
			u, err := url.Parse(tc.uri)
			if err != nil {
				t.Fatal(err)
			}
			got, err := namenodeAddrs(u, tc.override)
			if tc.wantErr != nil {
				if err == nil || !(errors.Is(err, tc.wantErr) || strings.Contains(err.Error(), tc.wantErr.Error())) {
					t.Fatalf("namenodeAddrs = %v, %v; want error %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != tc.want {
				t.Fatalf("namenodeAddrs = %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestHDFSUser(t *testing.T) {
	t.Setenv("HADOOP_USER_NAME", "alice")
	if u, err := hdfsUser("bob"); err != nil || u != "bob" {
		t.Fatalf("hdfsUser(override) = %q, %v", u, err)
	}
	if u, err := hdfsUser(""); err != nil || u != "alice" {
		t.Fatalf("hdfsUser with HADOOP_USER_NAME = %q, %v", u, err)
	}
	t.Setenv("HADOOP_USER_NAME", "")
	if u, err := hdfsUser(""); err != nil || u == "" {
		t.Fatalf("hdfsUser from the OS = %q, %v", u, err)
	}
}
