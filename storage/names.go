package storage

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// tempPrefix starts the base name of every uncommitted file; List hides such names and
// callers may not use them.
const tempPrefix = ".tide-tmp."

// cleanName validates a name relative to the root and returns it without a trailing slash.
// "" and "." denote the root, allowed only when root is true.
func cleanName(name string, root bool) (string, error) {
	name = strings.TrimSuffix(name, "/")
	if name == "" || name == "." {
		if root {
			return "", nil
		}
		return "", fmt.Errorf("%w %q: the root is not a file name", ErrInvalidName, name)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w %q: want a path relative to the storage root", ErrInvalidName, name)
	}
	for _, elem := range strings.Split(name, "/") {
		switch {
		case elem == "":
			return "", fmt.Errorf("%w %q: empty path element", ErrInvalidName, name)
		case elem == "." || elem == "..":
			return "", fmt.Errorf("%w %q: %q elements are not allowed", ErrInvalidName, name, elem)
		case strings.HasPrefix(elem, tempPrefix):
			return "", fmt.Errorf("%w %q: prefix %q is reserved for uncommitted files", ErrInvalidName, name, tempPrefix)
		case strings.ContainsAny(elem, "\x00\n\r:"):
			return "", fmt.Errorf("%w %q: NUL, newline and colon are not allowed", ErrInvalidName, name)
		}
	}
	return name, nil
}

// tempName is a fresh temporary name beside the file name (a cleaned, non-root name).
func tempName(name string) string {
	var r [8]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on supported platforms
	dir, base := path.Split(name)
	return dir + tempPrefix + base + "." + hex.EncodeToString(r[:])
}

func isTempName(base string) bool { return strings.HasPrefix(base, tempPrefix) }
