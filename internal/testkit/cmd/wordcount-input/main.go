// Command wordcount-input writes WordCount's benchmark input (testkit.WriteWordCountInput)
// into a directory, for scripts that need the same words as make bench (make pgo):
//
//	go run ./internal/testkit/cmd/wordcount-input -scale 20 DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tidestream/tide/internal/testkit"
)

func main() {
	scale := flag.Int("scale", 1, fmt.Sprintf("size: scale×%d words", testkit.WordCountInputWords))
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: wordcount-input [-scale N] DIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "wordcount-input: %v\n", err)
		os.Exit(1)
	}
	n, err := testkit.WriteWordCountInput(dir, *scale)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wordcount-input: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d words to %s\n", n, dir)
}
