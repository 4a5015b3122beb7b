// Package hadooptest gives Go tests the HDFS (and YARN) mini-cluster started by
// test/hadoop/up.sh (`make hadoop-up`): its addresses, read from the env file the launcher
// writes once everything is up, and its control channel for fault tests.
//
// Require skips the test when the cluster is not running, unless TIDE_REQUIRE_HADOOP=1, in
// which case it fails, so CI cannot skip silently. The env file is $TIDE_HADOOP_ENV, default
// <repo>/.cache/hadoop/env.
package hadooptest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit/envfile"
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

// envFile is where test/hadoop/up.sh says what it started.
var envFile = envfile.File{Service: "HDFS mini-cluster", PathVar: EnvFileVar, Default: ".cache/hadoop/env",
	RequireVar: RequireEnvVar, Start: "make hadoop-up"}

// Require returns the running cluster, or skips t (fails it with TIDE_REQUIRE_HADOOP=1).
// t holds the cluster shared until it ends (see Disrupt).
func Require(t testing.TB) *Env {
	t.Helper()
	e, err := Load()
	if err != nil {
		envFile.Missing(t, err)
	}
	// A launcher killed without its shutdown hook leaves a stale env file behind.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Command(ctx, "ping"); err != nil {
		envFile.Missing(t, fmt.Errorf("env file %s is stale: %w", e.Path, err))
	}
	e.share(t) // until t ends; a test disrupting the cluster (Disrupt) waits for it
	return e
}

// RequireYARN is Require for tests that also need the MiniYARNCluster.
func RequireYARN(t testing.TB) *Env {
	t.Helper()
	e := Require(t)
	if e.YARNResourceManager == "" {
		envFile.Missing(t, fmt.Errorf("the mini-cluster in %s runs without YARN (start it with test/hadoop/up.sh --yarn)", e.Path))
	}
	return e
}

// Load reads the env file ($TIDE_HADOOP_ENV, default <repo>/.cache/hadoop/env) without a
// test; see Require.
func Load() (*Env, error) {
	vars, path, err := envFile.Load()
	if err != nil {
		return nil, err
	}
	e, err := fromVars(vars)
	if err != nil {
		return nil, fmt.Errorf("env file %s: %w", path, err)
	}
	e.Path = path
	return e, nil
}

// Parse reads an env file's KEY=value lines (see envfile.Parse); HDFS_NAMENODE,
// HADOOP_CONF_DIR and HADOOP_CONTROL are required.
func Parse(r io.Reader) (*Env, error) {
	vars, err := envfile.Parse(r)
	if err != nil {
		return nil, err
	}
	return fromVars(vars)
}

func fromVars(vars map[string]string) (*Env, error) {
	if err := envfile.RequireKeys(vars, "HDFS_NAMENODE", "HADOOP_CONF_DIR", "HADOOP_CONTROL"); err != nil {
		return nil, err
	}
	e := &Env{Vars: vars}
	e.Namenode = vars["HDFS_NAMENODE"]
	e.URI = vars["HDFS_URI"]
	e.ConfDir = vars["HADOOP_CONF_DIR"]
	e.Control = vars["HADOOP_CONTROL"]
	e.YARNResourceManager = vars["YARN_RM_ADDRESS"]
	e.YARNScheduler = vars["YARN_SCHEDULER_ADDRESS"]
	e.YARNWebApp = vars["YARN_RM_WEBAPP_ADDRESS"]
	if nms := vars["YARN_NODEMANAGERS"]; nms != "" {
		e.NodeManagers = strings.Split(nms, ",")
	}
	if e.URI == "" {
		e.URI = "hdfs://" + e.Namenode
	}
	return e, nil
}
