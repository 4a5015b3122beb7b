package storage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// benchBytes is the size of one benchmark file: $TIDE_BENCH_BYTES, default 64 MiB.
func benchBytes(b *testing.B) int {
	if v := os.Getenv("TIDE_BENCH_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("TIDE_BENCH_BYTES=%q: want a positive byte count", v)
		}
		return n
	}
	return 64 << 20
}

// benchTargets are the storages to compare: local disk and, when the mini-cluster runs, HDFS.
func benchTargets(b *testing.B) map[string]func(b *testing.B) storage.Storage {
	return map[string]func(b *testing.B) storage.Storage{
		"file": func(b *testing.B) storage.Storage {
			s, err := storage.Open(context.Background(), "file://"+b.TempDir(), storage.Options{})
			if err != nil {
				b.Fatalf("Open: %v", err)
			}
			return s
		},
		"hdfs": func(b *testing.B) storage.Storage {
			env := hadooptest.Require(b)
			s := newHDFS(b, env, storage.Options{BufferSize: -1})
			return s
		},
	}
}

func benchData(n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	return data
}

func BenchmarkWrite(b *testing.B) {
	for _, name := range []string{"file", "hdfs"} {
		b.Run(name, func(b *testing.B) {
			s := benchTargets(b)[name](b)
			defer s.Close()
			data := benchData(benchBytes(b))
			ctx := context.Background()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := storage.WriteFile(ctx, s, fmt.Sprintf("w-%d", i%2), data); err != nil {
					b.Fatalf("WriteFile: %v", err)
				}
			}
		})
	}
}

// BenchmarkRead streams a committed file through a reused 1 MiB buffer, as Bench.java does and
// as a restore does (snapshot.Read consumes the stream): the read path's throughput alone.
func BenchmarkRead(b *testing.B) {
	benchRead(b, func(ctx context.Context, s storage.Storage, buf []byte) (int, error) {
		r, err := s.Open(ctx, "r")
		if err != nil {
			return 0, err
		}
		defer r.Close()
		total := 0
		for {
			n, err := r.Read(buf)
			total += n
			if errors.Is(err, io.EOF) {
				return total, nil
			}
			if err != nil {
				return total, err
			}
		}
	})
}

// BenchmarkReadFile reads a committed file whole into memory with storage.ReadFile.
func BenchmarkReadFile(b *testing.B) {
	benchRead(b, func(ctx context.Context, s storage.Storage, _ []byte) (int, error) {
		data, err := storage.ReadFile(ctx, s, "r")
		return len(data), err
	})
}

func benchRead(b *testing.B, read func(ctx context.Context, s storage.Storage, buf []byte) (int, error)) {
	for _, name := range []string{"file", "hdfs"} {
		b.Run(name, func(b *testing.B) {
			s := benchTargets(b)[name](b)
			defer s.Close()
			data := benchData(benchBytes(b))
			ctx := context.Background()
			if err := storage.WriteFile(ctx, s, "r", data); err != nil {
				b.Fatalf("WriteFile: %v", err)
			}
			buf := make([]byte, 1<<20)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n, err := read(ctx, s, buf)
				if err != nil || n != len(data) {
					b.Fatalf("read %d bytes of %s/r, %v; want %d", n, s.URI(), err, len(data))
				}
			}
			b.StopTimer()
			reportBlockSize(b, s, "r")
		})
	}
}

// reportBlockSize reports the HDFS block size of name (each block is a datanode connection of
// its own), so that bench.sh can show that Go and Java read files of the same block size.
func reportBlockSize(b *testing.B, s storage.Storage, name string) {
	r, err := s.Open(context.Background(), name)
	if err != nil {
		b.Fatalf("Open(%s/%s): %v", s.URI(), name, err)
	}
	defer r.Close()
	sr, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return
	}
	fi, err := sr.Stat()
	if err != nil {
		b.Fatalf("Stat of the reader of %s/%s: %v", s.URI(), name, err)
	}
	if st, ok := fi.Sys().(*hdfs.FileStatus); ok {
		b.ReportMetric(float64(st.GetBlocksize()), "block-bytes")
	}
}

// BenchmarkMetadata measures one List of a 10-entry directory, and one commit of an empty file
// (create + close + rename), the namenode round trips a checkpoint pays per file.
func BenchmarkMetadata(b *testing.B) {
	for _, name := range []string{"file", "hdfs"} {
		b.Run(name+"/list", func(b *testing.B) {
			s := benchTargets(b)[name](b)
			defer s.Close()
			ctx := context.Background()
			for i := range 10 {
				if err := storage.WriteFile(ctx, s, fmt.Sprintf("d/f%d", i), []byte("x")); err != nil {
					b.Fatalf("WriteFile: %v", err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if infos, err := s.List(ctx, "d"); err != nil || len(infos) != 10 {
					b.Fatalf("List = %d entries, %v", len(infos), err)
				}
			}
		})
		b.Run(name+"/create-empty-rename", func(b *testing.B) {
			s := benchTargets(b)[name](b)
			defer s.Close()
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := storage.WriteFile(ctx, s, "e", nil); err != nil {
					b.Fatalf("WriteFile: %v", err)
				}
			}
		})
	}
}

// BenchmarkUploadSessions compares the ways a multi-block file can go up to HDFS, on the same
// bytes in the same run: tide's block sessions (at least 32 MiB each), sessions of two blocks
// (what an upload falls back to after the namenode refused a block as not replicated yet: an
// append and a complete every two blocks), and one session for the whole file (what tide did
// before: one create, one complete, and a whole re-send after any failure). The three
// alternate within each iteration, so that a change in the machine's load hits them alike;
// the ratios are their times over the single session's. The mini-cluster's blocks are 1 MiB
// (production clusters: 128 MiB), which shows the cost of two-block sessions at its worst.
func BenchmarkUploadSessions(b *testing.B) {
	env := hadooptest.Require(b)
	for _, mb := range []int{30, 300} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			modes := []struct {
				name         string
				sessionBytes int64
				took         time.Duration
				resumed      resumeCounter
			}{{name: "single", sessionBytes: -1}, {name: "tide"}, {name: "two-block", sessionBytes: 1}}
			stores := make([]storage.Storage, len(modes))
			for i := range modes {
				// The storage's retry logs would break the benchmark's result lines: count them.
				stores[i] = newHDFS(b, env, storage.Options{BufferSize: -1, Logger: slog.New(&modes[i].resumed)})
				defer stores[i].Close()
				storage.SetSessionBytes(stores[i], modes[i].sessionBytes)
			}
			data := benchData(mb * 1000 * 1000)
			ctx := context.Background()
			b.SetBytes(int64(len(data)) * int64(len(modes)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range modes {
					start := time.Now()
					if err := storage.WriteFile(ctx, stores[j], "u", data); err != nil {
						b.Fatalf("WriteFile (%s): %v", modes[j].name, err)
					}
					modes[j].took += time.Since(start)
				}
			}
			for i := range modes {
				m := &modes[i]
				b.ReportMetric(float64(len(data))*float64(b.N)/m.took.Seconds()/1e6, m.name+"-MB/s")
				b.ReportMetric(float64(m.resumed.n.Load())/float64(b.N), m.name+"-resumed/op")
				if m.name != "single" {
					b.ReportMetric(m.took.Seconds()/modes[0].took.Seconds(), m.name+"/single")
				}
			}
		})
	}
}

// resumeCounter is a slog handler that counts the failed upload sessions a storage resumed
// and drops every record.
type resumeCounter struct{ n atomic.Int64 }

func (c *resumeCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *resumeCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "upload session failed") {
		c.n.Add(1)
	}
	return nil
}
func (c *resumeCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *resumeCounter) WithGroup(string) slog.Handler      { return c }
