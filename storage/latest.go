package storage

import (
	"context"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// LatestFile is the base name of the "latest checkpoint" pointer file inside a directory.
const LatestFile = "_latest"

// maxLatestLen bounds a pointer value; it names a checkpoint, not its contents.
const maxLatestLen = 4096

// SetLatest atomically points dir's latest pointer at value (e.g. "chk-42"): readers see the
// previous value or this one, never a mix.
func SetLatest(ctx context.Context, s Storage, dir, value string) error {
	if value == "" || len(value) > maxLatestLen || strings.ContainsAny(value, "\x00\n\r") || !utf8.ValidString(value) {
		return &Error{Op: "set-latest", Path: s.URI() + "/" + path.Join(dir, LatestFile), Kind: ErrInvalidName,
			Err: fmt.Errorf("pointer value %q: want 1-%d bytes of UTF-8 without NUL or newlines", value, maxLatestLen)}
	}
	return WriteFile(ctx, s, path.Join(dir, LatestFile), []byte(value+"\n"))
}

// Latest returns dir's latest pointer; errors.Is(err, ErrNotFound) when it was never set.
func Latest(ctx context.Context, s Storage, dir string) (string, error) {
	data, err := ReadFile(ctx, s, path.Join(dir, LatestFile))
	if err != nil {
		return "", err
	}
	v, ok := strings.CutSuffix(string(data), "\n")
	if !ok || v == "" || strings.ContainsAny(v, "\n\r\x00") {
		return "", fmt.Errorf("latest pointer %s under %s is malformed (%d bytes): want one line ending in a newline",
			path.Join(dir, LatestFile), s.URI(), len(data))
	}
	return v, nil
}
