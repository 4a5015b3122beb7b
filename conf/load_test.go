package conf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, FileName), "rest.port: 9000\nheartbeat.timeout: 60 s\nrest.prot: 1\n")
	c, warnings, err := Load(dir, []string{"-Dheartbeat.timeout=70 s"})
	if err != nil {
		t.Fatal(err)
	}
	if RestPort.Get(c) != 9000 || HeartbeatTimeout.Get(c) != 70*time.Second {
		t.Fatalf("rest.port %d heartbeat.timeout %v", RestPort.Get(c), HeartbeatTimeout.Get(c))
	}
	if len(warnings) != 1 || warnings[0].Related != "rest.port" {
		t.Fatalf("warnings = %v", warnings)
	}
	if got, want := c.Source("rest.port").String(), filepath.Join(dir, FileName)+":1"; got != want {
		t.Fatalf("source = %q; want %q", got, want)
	}
}

func TestLoadFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, FileName), "rest.port: 9001\n")
	t.Setenv(EnvConfDir, dir)
	c, _, err := Load("", nil)
	if err != nil || RestPort.Get(c) != 9001 {
		t.Fatalf("Load via %s: %v, port %d", EnvConfDir, err, RestPort.Get(c))
	}
	// An explicit directory wins over the environment.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, FileName), "rest.port: 9002\n")
	c, _, err = Load(other, nil)
	if err != nil || RestPort.Get(c) != 9002 {
		t.Fatalf("explicit dir: %v, port %d", err, RestPort.Get(c))
	}
}

func TestLoadWithoutDirectoryUsesDefaultsAndDynamic(t *testing.T) {
	t.Setenv(EnvConfDir, "")
	c, _, err := Load("", []string{"-Drest.port=1234"})
	if err != nil || RestPort.Get(c) != 1234 || HeartbeatTimeout.Get(c) != 50*time.Second {
		t.Fatalf("err %v", err)
	}
}

func TestLoadFlinkTwoFileName(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, FileNameV2), "rest:\n  port: 9003\n")
	c, _, err := Load(dir, nil)
	if err != nil || RestPort.Get(c) != 9003 {
		t.Fatalf("config.yaml: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	_, _, err := Load(empty, nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("missing file error = %v", err)
	}

	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, FileName), "rest.port: 1\nthis is wrong\n")
	_, _, err = Load(bad, nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), filepath.Join(bad, FileName)+":2: ") {
		t.Fatalf("parse error = %v", err)
	}

	_, _, err = Load(bad, []string{"-Dnoequals"})
	if !errors.As(err, &pe) || pe.File != "-D" {
		t.Fatalf("dynamic error = %v", err)
	}
}
