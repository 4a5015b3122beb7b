// Package kafkatest gives Go tests the Kafka broker started by test/kafka/up.sh
// (`make kafka-up`): its address, read from the env file up.sh writes once the broker serves,
// plus small helpers (unique topics, an admin client, a read_committed reader).
//
// Require skips the test when no broker runs, unless TIDE_REQUIRE_KAFKA=1, in which case it
// fails, so CI cannot skip silently. The env file is $TIDE_KAFKA_ENV, default
// <repo>/.cache/kafka/env.
package kafkatest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RequireEnvVar makes a missing broker a test failure instead of a skip when set to 1.
const RequireEnvVar = "TIDE_REQUIRE_KAFKA"

// EnvFileVar names the env file; default <repo>/.cache/kafka/env.
const EnvFileVar = "TIDE_KAFKA_ENV"

// Env is a running broker as described by its env file.
type Env struct {
	Path      string            // the env file
	Vars      map[string]string // every KEY=value line
	Bootstrap string            // KAFKA_BOOTSTRAP, host:port of the PLAINTEXT listener
	PID       int               // KAFKA_PID, the broker's JVM
	Log       string            // KAFKA_LOG, the broker's log file
	// ClasspathFile holds the broker's runtime classpath (KAFKA_CLASSPATH_FILE), for Kafka's
	// own command-line tools (perf clients in benchmarks).
	ClasspathFile string
	// SASLBootstrap is the SASL_PLAINTEXT listener (KAFKA_SASL_BOOTSTRAP), where SASLUser
	// (KAFKA_SASL_USER / KAFKA_SASL_PASSWORD) may do only what ACLs grant; empty when the
	// broker was started without it.
	SASLBootstrap, SASLUser, SASLPassword string
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

// EnvPath is $TIDE_KAFKA_ENV, or <repo>/.cache/kafka/env where <repo> is the nearest
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
			return filepath.Join(dir, ".cache", "kafka", "env"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory; set %s", EnvFileVar)
		}
		dir = parent
	}
}

// Parse reads KEY=value lines ('#' comments and blank lines ignored); KAFKA_BOOTSTRAP and
// KAFKA_PID are required.
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
	e.Bootstrap = e.Vars["KAFKA_BOOTSTRAP"]
	e.Log = e.Vars["KAFKA_LOG"]
	e.ClasspathFile = e.Vars["KAFKA_CLASSPATH_FILE"]
	e.SASLBootstrap = e.Vars["KAFKA_SASL_BOOTSTRAP"]
	e.SASLUser, e.SASLPassword = e.Vars["KAFKA_SASL_USER"], e.Vars["KAFKA_SASL_PASSWORD"]
	var errs []error
	if e.Bootstrap == "" {
		errs = append(errs, errors.New("KAFKA_BOOTSTRAP is missing"))
	}
	if p, ok := e.Vars["KAFKA_PID"]; !ok {
		errs = append(errs, errors.New("KAFKA_PID is missing"))
	} else if pid, err := strconv.Atoi(p); err != nil || pid <= 0 {
		errs = append(errs, fmt.Errorf("KAFKA_PID %q is not a process id", p))
	} else {
		e.PID = pid
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return e, nil
}
