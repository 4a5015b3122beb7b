package testkit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// WordCountInputWords is the size of WordCount's benchmark input at scale 1: the input
// issue 17's goals are measured on.
const WordCountInputWords = 2_000_000

// WriteWordCountInput writes WordCount's benchmark input into dir: 4 files
// (part-0.txt..part-3.txt) of scale×50,000 lines of 10 words out of a 1,000-word vocabulary
// (w000..w999), the same bytes for the same scale on every run. It returns the number of
// words (scale×WordCountInputWords). make bench and make pgo (through
// cmd/wordcount-input) both use it.
func WriteWordCountInput(dir string, scale int) (int, error) {
	const files, wordsPerLine = 4, 10
	if scale < 1 {
		return 0, fmt.Errorf("WordCount input scale %d: expected 1 or more", scale)
	}
	linesPerFile := scale * 50000
	vocab := make([]string, 1000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03d", i)
	}
	for f := range files {
		name := filepath.Join(dir, fmt.Sprintf("part-%d.txt", f))
		if err := writeWordCountFile(name, func(w *bufio.Writer) {
			for l := range linesPerFile {
				for i := range wordsPerLine {
					if i > 0 {
						w.WriteByte(' ')
					}
					w.WriteString(vocab[(f*7919+l*31+i*17)%len(vocab)])
				}
				w.WriteByte('\n')
			}
		}); err != nil {
			return 0, err
		}
	}
	return files * linesPerFile * wordsPerLine, nil
}

func writeWordCountFile(name string, fill func(*bufio.Writer)) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Close()
}
