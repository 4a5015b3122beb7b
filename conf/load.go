package conf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const (
	// FileName is the configuration file tide reads in the configuration directory.
	FileName = "flink-conf.yaml"
	// FileNameV2 is Flink 2.x's name for it, read when FileName is absent.
	FileNameV2 = "config.yaml"
	// EnvConfDir names the configuration directory when none is given explicitly.
	EnvConfDir = "FLINK_CONF_DIR"
)

// ResolveDir returns dir, or $FLINK_CONF_DIR when dir is empty ("" when neither is set).
func ResolveDir(dir string) string {
	if dir != "" {
		return dir
	}
	return os.Getenv(EnvConfDir)
}

// ConfigFile returns the configuration file in dir: flink-conf.yaml, else config.yaml. The error
// wraps fs.ErrNotExist when neither exists.
func ConfigFile(dir string) (string, error) {
	var firstErr error
	for _, name := range []string{FileName, FileNameV2} {
		path := filepath.Join(dir, name)
		_, err := os.Stat(path)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("configuration file %s: %w", path, err)
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return "", fmt.Errorf("configuration directory %s has neither %s nor %s: %w", dir, FileName, FileNameV2, firstErr)
}

// Load builds the configuration: defaults, then the file in dir (or $FLINK_CONF_DIR when dir is
// empty; no file at all when both are empty), then the dynamic properties (see ParseDynamic).
// An explicit or environment directory without a configuration file is an error.
func Load(dir string, dynamic []string) (*Config, []Warning, error) {
	dyn, err := ParseDynamic(dynamic)
	if err != nil {
		return nil, nil, err
	}
	dir = ResolveDir(dir)
	if dir == "" {
		return Build(dyn)
	}
	path, err := ConfigFile(dir)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read configuration file %s: %w", path, err)
	}
	return loadBytes(data, path, dyn)
}

// loadBytes parses a file's content and builds the configuration with the dynamic entries on top.
func loadBytes(data []byte, path string, dyn []Entry) (*Config, []Warning, error) {
	if len(data) > maxFileSize {
		return nil, nil, &ParseError{File: path, Msg: fmt.Sprintf("larger than %d bytes", maxFileSize)}
	}
	entries, parseWarnings, err := parseBytes(data, path)
	if err != nil {
		return nil, parseWarnings, err
	}
	cfg, warnings, err := Build(entries, dyn)
	return cfg, append(parseWarnings, warnings...), err
}
