package examples

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/tidestream/tide/stream"
)

// WordCountName is the registered name of the word count job.
const WordCountName = "WordCount"

// WordCount is a word and how often it was seen so far.
type WordCount struct {
	Word  string
	Count int64
}

func (w WordCount) String() string { return string(w.AppendTo(nil)) }

// AppendTo appends w as String formats it, "(word,count)", to dst: the file sink formats
// every update straight into its write buffer with it.
func (w WordCount) AppendTo(dst []byte) []byte {
	dst = append(append(append(dst, '('), w.Word...), ',')
	return append(strconv.AppendInt(dst, w.Count, 10), ')')
}

// WordCountCodec is the hand-written codec of WordCount (length-prefixed word, varint count).
type WordCountCodec struct{}

func (WordCountCodec) Append(dst []byte, v WordCount) []byte {
	dst = stream.AppendString(dst, v.Word)
	return stream.Int64Codec{}.Append(dst, v.Count)
}

func (WordCountCodec) Decode(src []byte) (WordCount, error) {
	d := stream.NewDecoder(src)
	v := WordCount{Word: d.String(), Count: d.Varint()}
	if d.Err() != nil {
		return v, fmt.Errorf("decoding WordCount: %w", d.Err())
	}
	return v, nil
}

// Tokenize splits a line into lower-case words (letters and digits).
func Tokenize(line string, emit func(string)) {
	start := -1
	for i, r := range line {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			emit(strings.ToLower(line[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		emit(strings.ToLower(line[start:]))
	}
}

// BuildWordCount builds Flink's WordCount over the text files of --input: lines are split
// into words, keyed by word, and the running count of every word is emitted; the counts go
// to the exactly-once file sink in --output, or are printed.
func BuildWordCount(args []string) (*stream.Job, error) {
	a, err := parseArgs(WordCountName, args)
	if err != nil {
		return nil, err
	}
	if a.input == "" {
		return nil, fmt.Errorf("job %s: --input DIR is required", WordCountName)
	}
	job := stream.NewJob(WordCountName, a.parallelism, a.maxParallel)
	lines := stream.DirectorySource(job, "lines", stream.Directory{Dir: a.input})
	words := stream.FlatMap(lines, "tokenize", func(line string, emit func(WordCount)) {
		Tokenize(line, func(w string) { emit(WordCount{Word: w, Count: 1}) })
	}).WithCodec(WordCountCodec{})
	counts := stream.Reduce(stream.KeyBy(words, func(w WordCount) string { return w.Word }), "count",
		func(acc, v WordCount) WordCount { return WordCount{Word: acc.Word, Count: acc.Count + v.Count} })
	if a.output != "" {
		stream.FileSinkAppend(counts, "sink", a.output, func(dst []byte, w WordCount) []byte { return w.AppendTo(dst) })
	} else {
		stream.Print(counts, "print", nil)
	}
	return job, nil
}
