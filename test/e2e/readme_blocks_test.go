package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeConfAndScript returns the one yaml block (settings for conf/flink-conf.yaml) and
// the one sh block of a README section, failing t unless the section has exactly one of
// each and the sh block still holds every command of want (the ones the test checks).
func readmeConfAndScript(t *testing.T, heading string, want ...string) (yaml, script string) {
	t.Helper()
	yamls := readmeFenced(t, heading, "yaml")
	scripts := readmeFenced(t, heading, "sh")
	if len(yamls) != 1 || len(scripts) != 1 {
		t.Fatalf("README section %q: %d yaml and %d sh blocks, want one each", heading, len(yamls), len(scripts))
	}
	for _, w := range want {
		if !strings.Contains(scripts[0], w) {
			t.Fatalf("the README's %q block changed shape (no %q):\n%s", heading, w, scripts[0])
		}
	}
	return yamls[0], scripts[0]
}

// readmeFenced returns the ```lang blocks of a README section, in order.
func readmeFenced(t *testing.T, heading, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks []string
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "```"+lang+"\n")
		if !ok {
			return blocks
		}
		block, tail, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("README section %q: unterminated %s block", heading, lang)
		}
		blocks, rest = append(blocks, block), tail
	}
}
