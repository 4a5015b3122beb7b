package am

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Savepoint locations. A user names a savepoint directory (--fromSavepoint) or a savepoint
// target (--dir, target-directory, state.savepoints.dir, state.savepoints.allowed-dirs) in
// one of two forms:
//
//	/tmp/save points/sp-1                  an absolute local path, taken literally: a space,
//	                                       '#' or '%' is part of the name
//	file:///tmp/save%20points/sp-1         a URI (file:// or hdfs://), percent-encoded as
//	hdfs://nn:8020/savepoints/sp-1         URIs are (RFC 3986): %20 is a space
//
// Both name the same directory. tide prints locations as URIs (the second form), which a
// shell passes on without quoting and every command accepts back.

// savepointsAllowedDirsKey lists the roots (besides state.savepoints.dir) under which
// savepoints may be written, separated by ";".
const savepointsAllowedDirsKey = "state.savepoints.allowed-dirs"

// errSavepointLocation is wrapped by every error about the form of a location.
var errSavepointLocation = errors.New("invalid savepoint location")

// parseSavepointLocation parses a location in either form and returns its URI with a clean
// absolute path ("." and ".." resolved, no trailing slash).
func parseSavepointLocation(raw string) (*url.URL, error) {
	if strings.ContainsAny(raw, "\x00\n\r") {
		return nil, fmt.Errorf("%w %q: NUL or newline in the path", errSavepointLocation, raw)
	}
	var u *url.URL
	switch {
	case raw == "":
		return nil, fmt.Errorf("%w: empty; expected an absolute path or a URI such as hdfs://namenode:8020/savepoints", errSavepointLocation)
	case strings.HasPrefix(raw, "/"):
		u = &url.URL{Scheme: "file", Path: raw}
	case strings.Contains(raw, "://"):
		var err error
		if u, err = url.Parse(raw); err != nil {
			return nil, fmt.Errorf("%w %q: %w (in a URI, write a space as %%20, '#' as %%23 and '%%' as %%25; or give the absolute path as it is)", errSavepointLocation, raw, errors.Unwrap(err))
		}
		u.Scheme = strings.ToLower(u.Scheme)
		switch {
		case u.Scheme == "":
			return nil, fmt.Errorf("%w %q: expected an absolute path or a URI such as hdfs://namenode:8020/savepoints", errSavepointLocation, raw)
		case u.Scheme != "file" && u.Scheme != "hdfs":
			return nil, fmt.Errorf("%w %q: scheme %q; expected file:// or hdfs://", errSavepointLocation, raw, u.Scheme)
		case u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
			return nil, fmt.Errorf("%w %q: user info, query and fragment are not part of a savepoint location (in a URI, write '#' as %%23 and '?' as %%3F)", errSavepointLocation, raw)
		case u.Scheme == "file" && u.Host != "" && u.Host != "localhost":
			return nil, fmt.Errorf("%w %q: file URI host %q; expected file:///absolute/path", errSavepointLocation, raw, u.Host)
		case u.Scheme == "file":
			u.Host = ""
		}
	default:
		return nil, fmt.Errorf("%w %q: expected an absolute path or a URI such as hdfs://namenode:8020/savepoints", errSavepointLocation, raw)
	}
	if strings.ContainsAny(u.Path, "\x00\n\r") {
		return nil, fmt.Errorf("%w %q: NUL or newline in the path", errSavepointLocation, raw)
	}
	u.Path, u.RawPath, u.OmitHost = path.Clean("/"+u.Path), "", false
	return u, nil
}

// SavepointTarget resolves the target directory of a savepoint request ("": the configured
// state.savepoints.dir) to the URI to write under, or says why it is refused: no target, a
// malformed location, or one outside state.savepoints.dir and state.savepoints.allowed-dirs.
func (a *AM) SavepointTarget(target string) (string, error) {
	cfg := a.ConfigInForce()
	if target == "" {
		target = cfg[savepointsDirKey]
	}
	if target == "" {
		return "", errors.New("no target directory: set target-directory in the request or " + savepointsDirKey + " in the configuration")
	}
	u, err := parseSavepointLocation(target)
	if err != nil {
		return "", fmt.Errorf("target directory: %w", err)
	}
	roots, err := newSavepointRoots(cfg[savepointsDirKey], cfg[savepointsAllowedDirsKey])
	if err != nil {
		return "", fmt.Errorf("the AM's savepoint directories: %w", err)
	}
	if err := roots.check(u); err != nil {
		return "", err
	}
	return u.String(), nil
}

// savepointRoots are the directories savepoints may be written under.
type savepointRoots struct {
	roots []*url.URL
	raw   []string // as configured, for messages
}

// newSavepointRoots parses state.savepoints.dir and state.savepoints.allowed-dirs.
func newSavepointRoots(dir, allowed string) (savepointRoots, error) {
	var r savepointRoots
	add := func(key, raw string) error {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return nil
		}
		u, err := parseSavepointLocation(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		r.roots = append(r.roots, u)
		r.raw = append(r.raw, u.String())
		return nil
	}
	if err := add(savepointsDirKey, dir); err != nil {
		return r, err
	}
	for _, a := range strings.Split(allowed, ";") {
		if err := add(savepointsAllowedDirsKey, a); err != nil {
			return r, err
		}
	}
	return r, nil
}

// check returns nil when target lies under (or is) one of the roots; else an error naming
// the target and the roots. Local paths are compared with their symbolic links resolved, so a
// link under a root cannot lead out of it.
func (r savepointRoots) check(target *url.URL) error {
	if len(r.roots) == 0 {
		return fmt.Errorf("savepoint target %s: no savepoint directories are configured; set %s (the default target) or %s (more allowed roots, separated by ';') in the AM's configuration",
			target, savepointsDirKey, savepointsAllowedDirsKey)
	}
	for _, root := range r.roots {
		if under(target, root) {
			return nil
		}
	}
	return fmt.Errorf("savepoint target %s is outside the allowed savepoint directories %s (%s and %s)",
		target, strings.Join(r.raw, ", "), savepointsDirKey, savepointsAllowedDirsKey)
}

// under reports whether target is root or below it: same scheme and authority, and the
// path (symbolic links resolved for file://) within root's.
func under(target, root *url.URL) bool {
	if target.Scheme != root.Scheme || !strings.EqualFold(target.Host, root.Host) {
		return false
	}
	tp, rp := target.Path, root.Path
	if target.Scheme == "file" {
		tp, rp = resolveLinks(tp), resolveLinks(rp)
	}
	return tp == rp || rp == "/" || strings.HasPrefix(tp, rp+"/")
}

// resolveLinks resolves the symbolic links of the longest existing prefix of the clean
// absolute local path p and appends the rest.
func resolveLinks(p string) string {
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return path.Join(filepath.ToSlash(real), rest)
		} else if !errors.Is(err, os.ErrNotExist) {
			return p
		}
		parent := path.Dir(cur)
		if parent == cur {
			return p
		}
		rest = path.Join(path.Base(cur), rest)
		cur = parent
	}
}
