package examples

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/tidestream/tide/storage"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tidestream/tide/stream"
)

// CheckableCountName is the registered name of the checkable job.
const CheckableCountName = "CheckableCount"

// Defaults of CheckableCount.
const (
	DefaultCheckableRecords = 100_000
	DefaultCheckableKeys    = 10
)

// KeyCount is one key's result: how many numbers n in 1..N had n mod K == Key, and their sum.
type KeyCount struct {
	Key   int64
	Count int64
	Sum   int64
}

// String formats the result as the output line "key,count,sum".
func (k KeyCount) String() string { return fmt.Sprintf("%d,%d,%d", k.Key, k.Count, k.Sum) }

// keyCountCodec is a hand-written codec (three varints).
type keyCountCodec struct{}

func (keyCountCodec) Append(dst []byte, v KeyCount) []byte {
	dst = stream.Int64Codec{}.Append(dst, v.Key)
	dst = stream.Int64Codec{}.Append(dst, v.Count)
	return stream.Int64Codec{}.Append(dst, v.Sum)
}

func (keyCountCodec) Decode(src []byte) (KeyCount, error) {
	d := stream.NewDecoder(src)
	v := KeyCount{Key: d.Varint(), Count: d.Varint(), Sum: d.Varint()}
	if d.Err() != nil {
		return v, fmt.Errorf("decoding KeyCount: %w", d.Err())
	}
	return v, nil
}

// BuildCheckableCount builds the checkable job: the numbers 1..N (--records) from a
// NumberSequence source (optionally rate limited with --rate, per source subtask), keyed by
// n mod K (--keys), counted and summed per key in keyed state, and each key's final
// "key,count,sum" written by the exactly-once file sink into --output when the input ends.
// With --dedup the numbers first pass a keyed step that drops repeats, remembering every
// number in MapState (so the job's keyed state grows with --records, not --keys).
// With --ballast B the numbers (then) pass a keyed step that stores B bytes of filler per
// key (checkable_ballast.go), so the job's keyed state weighs K×B bytes.
// ExpectedOutput computes the exact answer.
func BuildCheckableCount(args []string) (*stream.Job, error) {
	a, err := parseArgs(CheckableCountName, args)
	if err != nil {
		return nil, err
	}
	if a.output == "" {
		return nil, fmt.Errorf("job %s: --output DIR is required (the exactly-once sink writes there)", CheckableCountName)
	}
	n, k := withDefaults(a)
	job := stream.NewJob(CheckableCountName, a.parallelism, a.maxParallel)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: n, Rate: a.rate})
	keyed := stream.KeyBy(nums, func(v int64) int64 { return v % k })
	if a.dedup {
		unique := stream.ProcessKeyed(keyed, "dedup", func() stream.KeyedProcessFunction[int64, int64, int64] { return &dedupFn{} })
		keyed = stream.KeyBy(unique.WithCodec(stream.Int64Codec{}), func(v int64) int64 { return v % k })
	}
	if a.ballast > 0 || a.progress != "" {
		weighed := stream.ProcessKeyed(keyed, "ballast", newBallastFn(a.ballast, a.progress))
		keyed = stream.KeyBy(weighed.WithCodec(stream.Int64Codec{}), func(v int64) int64 { return v % k })
	}
	counts := stream.Aggregate(keyed, "count-and-sum", stream.Aggregator[int64, int64, KeyCount, KeyCount]{
		Add: func(acc KeyCount, v int64) KeyCount {
			acc.Count++
			acc.Sum += v
			return acc
		},
		Result: func(key int64, acc KeyCount) KeyCount {
			acc.Key = key
			return acc
		},
		AccCodec: keyCountCodec{},
	}, stream.EmitAtEnd).WithCodec(keyCountCodec{})
	stream.FileSink(counts, "sink", a.output, KeyCount.String)
	if a.timestamps != "" {
		timestampSink(nums, a.timestamps)
	}
	return job, nil
}

func withDefaults(a jobArgs) (n, k int64) {
	n, k = a.records, a.keys
	if n == 0 {
		n = DefaultCheckableRecords
	}
	if k == 0 {
		k = DefaultCheckableKeys
	}
	return n, k
}

// ExpectedCounts is the exact answer of CheckableCount for N records and K keys, as sorted
// output lines.
func ExpectedCounts(n, k int64) []string {
	res := make([]KeyCount, 0, k)
	for key := range k {
		// numbers in 1..n congruent to key mod k: key, key+k, … (key 0 starts at k)
		first := key
		if first == 0 {
			first = k
		}
		if first > n {
			continue
		}
		count := (n-first)/k + 1
		last := first + (count-1)*k
		res = append(res, KeyCount{Key: key, Count: count, Sum: (first + last) * count / 2})
	}
	lines := make([]string, 0, len(res))
	for _, r := range res {
		lines = append(lines, r.String())
	}
	sort.Strings(lines)
	return lines
}

// ExpectedOutput is the exact answer of CheckableCount run with args, as sorted lines.
func ExpectedOutput(args []string) ([]string, error) {
	a, err := parseArgs(CheckableCountName, args)
	if err != nil {
		return nil, err
	}
	n, k := withDefaults(a)
	return ExpectedCounts(n, k), nil
}

// ReadCommittedOutput returns every line of the committed part files in dir (a local path,
// file:// or hdfs:// URI, as given to the job's --output), sorted (in-progress and pending
// files, whose names start with ".", are ignored).
func ReadCommittedOutput(dir string) ([]string, error) {
	var lines []string
	if err := EachCommittedLine(dir, func(_, line string) error {
		lines = append(lines, line)
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(lines)
	return lines, nil
}

// EachCommittedLine calls fn with every line of the committed part files in dir, file by
// file, without holding them all (ReadCommittedOutput's files, unsorted); an error from fn
// stops it and is returned.
func EachCommittedLine(dir string, fn func(file, line string) error) error {
	uri, err := stream.OutputURI(dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), readOutputTimeout)
	defer cancel()
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		// storage.Open would create a missing directory: a missing output is an error here.
		if _, err := os.Stat(u.Path); err != nil {
			return fmt.Errorf("reading output directory: %w", err)
		}
	}
	st, err := storage.Open(ctx, uri, storage.Options{})
	if err != nil {
		return fmt.Errorf("reading output directory: %w", err)
	}
	defer st.Close()
	files, err := st.List(ctx, "")
	if err != nil {
		return fmt.Errorf("reading output directory: %w", err)
	}
	for _, f := range files {
		if f.IsDir || strings.HasPrefix(f.Name, ".") {
			continue
		}
		b, err := storage.ReadFile(ctx, st, f.Name)
		if err != nil {
			return fmt.Errorf("reading output: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if err := fn(f.Name, sc.Text()); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading output %s: %w", f.Name, err)
		}
	}
	return nil
}

// readOutputTimeout bounds EachCommittedLine (HDFS retries included).
const readOutputTimeout = 2 * time.Minute
