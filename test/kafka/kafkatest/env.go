// Package kafkatest gives Go tests the Kafka broker started by test/kafka/up.sh
// (`make kafka-up`): its address, read from the env file up.sh writes once the broker serves,
// plus small helpers (unique topics, an admin client, a read_committed reader).
//
// Require skips the test when no broker runs, unless TIDE_REQUIRE_KAFKA=1, in which case it
// fails, so CI cannot skip silently. The env file is $TIDE_KAFKA_ENV, default
// <repo>/.cache/kafka/env.
package kafkatest

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tidestream/tide/internal/testkit/envfile"
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

// envFile is where test/kafka/up.sh says what it started.
var envFile = envfile.File{Service: "Kafka broker", PathVar: EnvFileVar, Default: ".cache/kafka/env",
	RequireVar: RequireEnvVar, Start: "make kafka-up"}

// Load reads the env file ($TIDE_KAFKA_ENV, default <repo>/.cache/kafka/env) without a test;
// see Require.
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

// Parse reads an env file's KEY=value lines (see envfile.Parse); KAFKA_BOOTSTRAP and
// KAFKA_PID are required.
func Parse(r io.Reader) (*Env, error) {
	vars, err := envfile.Parse(r)
	if err != nil {
		return nil, err
	}
	return fromVars(vars)
}

func fromVars(vars map[string]string) (*Env, error) {
	if err := envfile.RequireKeys(vars, "KAFKA_BOOTSTRAP", "KAFKA_PID"); err != nil {
		return nil, err
	}
	pid, err := strconv.Atoi(vars["KAFKA_PID"])
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("KAFKA_PID %q is not a process id", vars["KAFKA_PID"])
	}
	return &Env{
		Vars:          vars,
		Bootstrap:     vars["KAFKA_BOOTSTRAP"],
		PID:           pid,
		Log:           vars["KAFKA_LOG"],
		ClasspathFile: vars["KAFKA_CLASSPATH_FILE"],
		SASLBootstrap: vars["KAFKA_SASL_BOOTSTRAP"],
		SASLUser:      vars["KAFKA_SASL_USER"],
		SASLPassword:  vars["KAFKA_SASL_PASSWORD"],
	}, nil
}
