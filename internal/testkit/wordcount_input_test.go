package testkit

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteWordCountInput(t *testing.T) {
	dir := t.TempDir()
	n, err := WriteWordCountInput(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != WordCountInputWords {
		t.Fatalf("scale 1 wrote %d words, want %d", n, WordCountInputWords)
	}
	counted, vocab := 0, map[string]bool{}
	for f := range 4 {
		r, err := os.Open(filepath.Join(dir, "part-"+string(rune('0'+f))+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			for _, w := range strings.Fields(sc.Text()) {
				counted++
				vocab[w] = true
			}
		}
		r.Close()
	}
	if counted != n || len(vocab) != 1000 {
		t.Fatalf("files hold %d words of %d distinct, want %d of 1000", counted, len(vocab), n)
	}
	first, err := os.ReadFile(filepath.Join(dir, "part-1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// File 1, line 0: (7919 + 17w) mod 1000 for w = 0..9.
	if want := "w919 w936 w953 w970 w987 w004 w021 w038 w055 w072\n"; !strings.HasPrefix(string(first), want) {
		t.Fatalf("part-1.txt starts %q, want %q", first[:len(want)], want)
	}
	if _, err := WriteWordCountInput(dir, 0); err == nil || !strings.Contains(err.Error(), "expected 1 or more") {
		t.Fatalf("scale 0: %v, want an error saying what is expected", err)
	}
}
