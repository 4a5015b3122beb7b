package exec_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cutWordCount parses "(word,count)".
func cutWordCount(line string) (string, int, bool) {
	if !strings.HasPrefix(line, "(") || !strings.HasSuffix(line, ")") {
		return "", 0, false
	}
	word, count, ok := strings.Cut(line[1:len(line)-1], ",")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.Atoi(count)
	return word, n, err == nil
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
