// Package envfile finds a service that a test harness started outside the tests (the
// HDFS/YARN mini-cluster of test/hadoop, the Kafka broker of test/kafka, ...) through the
// env file of KEY=value lines its launcher writes once the service is up. It imports nothing
// of tide, so harness packages that tide's own package tests import can use it.
package envfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// File is a service's env file and how a test treats the service's absence. A harness
// package declares one and builds its Load and Require on it:
//
//	var envFile = envfile.File{Service: "Kafka broker", PathVar: "TIDE_KAFKA_ENV",
//		Default: ".cache/kafka/env", RequireVar: "TIDE_REQUIRE_KAFKA", Start: "make kafka-up"}
//
//	vars, path, err := envFile.Load()  // then envfile.RequireKeys(vars, ...)
//	if err != nil { envFile.Missing(t, err) }  // skips, or fails under TIDE_REQUIRE_KAFKA=1
type File struct {
	Service    string // what runs, for messages: "Kafka broker"
	PathVar    string // the environment variable naming the file: "TIDE_KAFKA_ENV"
	Default    string // the file below the repository root when PathVar is unset: ".cache/kafka/env"
	RequireVar string // set to 1, a missing service fails the test instead of skipping it
	Start      string // the command that starts the service: "make kafka-up"
}

// Path is $PathVar, or Default below the repository root: the nearest directory above the
// working directory holding go.mod.
func (f File) Path() (string, error) {
	if p := os.Getenv(f.PathVar); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(f.Default)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory; set %s", f.PathVar)
		}
		dir = parent
	}
}

// Load reads and parses the file at Path; errors name the file. It returns the file's path
// too, for messages about a stale file.
func (f File) Load() (vars map[string]string, path string, err error) {
	path, err = f.Path()
	if err != nil {
		return nil, "", err
	}
	r, err := os.Open(path)
	if err != nil {
		return nil, path, fmt.Errorf("reading env file %s: %w", path, err)
	}
	defer r.Close()
	vars, err = Parse(r)
	if err != nil {
		return nil, path, fmt.Errorf("env file %s: %w", path, err)
	}
	return vars, path, nil
}

// Required says whether $RequireVar is 1: a missing service must fail the test.
func (f File) Required() bool { return os.Getenv(f.RequireVar) == "1" }

// Missing ends t because the service is not there (err says why): it skips t, or fails it
// when Required, so CI cannot skip silently.
func (f File) Missing(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s not running: run `%s` (%v)", f.Service, f.Start, err)
	if f.Required() {
		t.Fatalf("%s; %s=1 requires it", msg, f.RequireVar)
	}
	t.Skip(msg)
}

// Parse reads KEY=value lines: blank lines and '#' comments are ignored, space around
// keys and values is trimmed, a key holds no blank and appears once. Errors name the line.
func Parse(r io.Reader) (map[string]string, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	line := 1
	for ; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("line %d: %q is not KEY=value", line, text)
		}
		if _, dup := vars[k]; dup {
			return nil, fmt.Errorf("line %d: %s set twice", line, k)
		}
		vars[k] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line, err)
	}
	return vars, nil
}

// RequireKeys names, in the order given, each key vars lacks or holds empty.
func RequireKeys(vars map[string]string, keys ...string) error {
	var errs []error
	for _, k := range keys {
		if vars[k] == "" {
			errs = append(errs, fmt.Errorf("%s is missing", k))
		}
	}
	return errors.Join(errs...)
}
