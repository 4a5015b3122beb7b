// Package hadooptest gives Go tests the HDFS (and YARN) mini-cluster started by
// test/hadoop/up.sh (`make hadoop-up`): its addresses, read from the env file the launcher
// writes once everything is up, and its control channel for fault tests.
//
// Require skips the test when the cluster is not running, unless TIDE_REQUIRE_HADOOP=1, in
// which case it fails, so CI cannot skip silently. The env file is $TIDE_HADOOP_ENV, default
// <repo>/.cache/hadoop/env.
package hadooptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Env is a running mini-cluster as described by its env file.
type Env struct {
	Path     string            // the env file
	Vars     map[string]string // every KEY=value line
	Namenode string            // HDFS_NAMENODE, host:port
	URI      string            // HDFS_URI, hdfs://host:port
	ConfDir  string            // HADOOP_CONF_DIR holding core-site.xml (and yarn-site.xml)
	Control  string            // HADOOP_CONTROL, host:port of the control channel

	// Set when the launcher was started with --yarn.
	YARNResourceManager string   // YARN_RM_ADDRESS
	YARNScheduler       string   // YARN_SCHEDULER_ADDRESS
	YARNWebApp          string   // YARN_RM_WEBAPP_ADDRESS
	NodeManagers        []string // YARN_NODEMANAGERS, NodeIds host:port
}

// RequireEnvVar makes a missing cluster a test failure instead of a skip when set to 1.
const RequireEnvVar = "TIDE_REQUIRE_HADOOP"

// EnvFileVar names the env file; default <repo>/.cache/hadoop/env.
const EnvFileVar = "TIDE_HADOOP_ENV"

// Require returns the running cluster, or skips t (fails it with TIDE_REQUIRE_HADOOP=1).
func Require(t testing.TB) *Env {
	t.Helper()
	e, err := Load()
	if err != nil {
		missing(t, err)
	}
	// A launcher killed without its shutdown hook leaves a stale env file behind.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Command(ctx, "ping"); err != nil {
		missing(t, fmt.Errorf("env file %s is stale: %w", e.Path, err))
	}
	return e
}

// RequireYARN is Require for tests that also need the MiniYARNCluster.
func RequireYARN(t testing.TB) *Env {
	t.Helper()
	e := Require(t)
	if e.YARNResourceManager == "" {
		missing(t, fmt.Errorf("the mini-cluster in %s runs without YARN (start it with test/hadoop/up.sh --yarn)", e.Path))
	}
	return e
}

func missing(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("HDFS mini-cluster not running: run `make hadoop-up` (%v)", err)
	if os.Getenv(RequireEnvVar) == "1" {
		t.Fatalf("%s; %s=1 requires it", msg, RequireEnvVar)
	}
	t.Skip(msg)
}

// Load reads the env file without a test; see Require.
func Load() (*Env, error) {
	p, err := EnvPath()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading env file %s: %w", p, err)
	}
	defer f.Close()
	e, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("env file %s: %w", p, err)
	}
	e.Path = p
	return e, nil
}

// EnvPath is $TIDE_HADOOP_ENV, or <repo>/.cache/hadoop/env where <repo> is the nearest
// directory above the working directory holding go.mod.
func EnvPath() (string, error) {
	if p := os.Getenv(EnvFileVar); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache", "hadoop", "env"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory; set %s", EnvFileVar)
		}
		dir = parent
	}
}

// Parse reads KEY=value lines ('#' comments and blank lines ignored); HDFS_NAMENODE,
// HADOOP_CONF_DIR and HADOOP_CONTROL are required.
func Parse(r io.Reader) (*Env, error) {
	e := &Env{Vars: map[string]string{}}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("line %d: %q is not KEY=value", line, text)
		}
		if _, dup := e.Vars[k]; dup {
			return nil, fmt.Errorf("line %d: %s set twice", line, k)
		}
		e.Vars[k] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	e.Namenode = e.Vars["HDFS_NAMENODE"]
	e.URI = e.Vars["HDFS_URI"]
	e.ConfDir = e.Vars["HADOOP_CONF_DIR"]
	e.Control = e.Vars["HADOOP_CONTROL"]
	e.YARNResourceManager = e.Vars["YARN_RM_ADDRESS"]
	e.YARNScheduler = e.Vars["YARN_SCHEDULER_ADDRESS"]
	e.YARNWebApp = e.Vars["YARN_RM_WEBAPP_ADDRESS"]
	if nms := e.Vars["YARN_NODEMANAGERS"]; nms != "" {
		e.NodeManagers = strings.Split(nms, ",")
	}
	var errs []error
	for k, v := range map[string]string{"HDFS_NAMENODE": e.Namenode, "HADOOP_CONF_DIR": e.ConfDir, "HADOOP_CONTROL": e.Control} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is missing", k))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if e.URI == "" {
		e.URI = "hdfs://" + e.Namenode
	}
	return e, nil
}
