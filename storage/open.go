package storage

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Open returns the storage for uri, chosen by its scheme: file:// or hdfs://. The HDFS client
// connects lazily, so Open succeeds while the namenode is down (operations then retry); it
// fails at once for an unknown scheme, a malformed URI or a namenode host that does not resolve.
func Open(ctx context.Context, uri string, opts Options) (Storage, error) {
	opts = opts.withDefaults()
	u, err := parseURI(uri)
	if err != nil {
		return nil, &Error{Op: "open-storage", Path: uri, Kind: ErrUnsupportedScheme, Err: err}
	}
	switch u.Scheme {
	case "file":
		return openLocal(ctx, u, opts)
	case "hdfs":
		return openHDFS(ctx, u, opts)
	default:
		return nil, &Error{Op: "open-storage", Path: uri, Kind: ErrUnsupportedScheme,
			Err: fmt.Errorf("scheme %q: want file:// or hdfs://", u.Scheme)}
	}
}

// parseURI parses a storage URI and checks the parts every scheme shares.
func parseURI(uri string) (*url.URL, error) {
	if uri == "" {
		return nil, fmt.Errorf("empty storage URI: want file:///path or hdfs://namenode:port/path")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("parsing storage URI %q: %w", uri, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("storage URI %q has no scheme: want file:///path or hdfs://namenode:port/path", uri)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Opaque != "" {
		return nil, fmt.Errorf("storage URI %q: want %s:///absolute/path", uri, u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("storage URI %q: query, fragment and user info are not supported", uri)
	}
	if strings.ContainsAny(u.Path, "\x00\n\r") {
		return nil, fmt.Errorf("storage URI %q: path contains NUL or newline", uri)
	}
	return u, nil
}

// CheckURI checks uri the way Open would, without opening anything: a file:// URI with an
// absolute path, or an hdfs:// URI.
func CheckURI(uri string) error {
	if u, err := url.Parse(uri); err == nil && u.Scheme != "" {
		if sc := strings.ToLower(u.Scheme); sc != "file" && sc != "hdfs" {
			return &Error{Op: "check-uri", Path: uri, Kind: ErrUnsupportedScheme, Err: fmt.Errorf("scheme %q: want file:// or hdfs://", sc)}
		}
	}
	u, err := parseURI(uri)
	if err != nil {
		return &Error{Op: "check-uri", Path: uri, Kind: ErrUnsupportedScheme, Err: err}
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return &Error{Op: "check-uri", Path: uri, Kind: ErrUnsupportedScheme, Err: fmt.Errorf("file URI host %q: want file:///absolute/path", u.Host)}
		}
		if !path.IsAbs(u.Path) {
			return &Error{Op: "check-uri", Path: uri, Kind: ErrInvalidName, Err: fmt.Errorf("file URI path %q is not absolute", u.Path)}
		}
		return nil
	case "hdfs":
		return nil
	default:
		return &Error{Op: "check-uri", Path: uri, Kind: ErrUnsupportedScheme, Err: fmt.Errorf("scheme %q: want file:// or hdfs://", u.Scheme)}
	}
}
