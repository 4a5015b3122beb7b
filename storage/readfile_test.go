package storage_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestOpenReaderKnowsSize checks that the readers of both backends tell their file's size, by
// which ReadFile allocates the file's buffer once (multi-block on the mini-cluster's 1 MiB
// blocks).
func TestOpenReaderKnowsSize(t *testing.T) {
	targets := map[string]func(t *testing.T) storage.Storage{
		"file": func(t *testing.T) storage.Storage {
			s, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return s
		},
		"hdfs": func(t *testing.T) storage.Storage {
			return newHDFS(t, hadooptest.Require(t), storage.Options{})
		},
	}
	for _, name := range []string{"file", "hdfs"} {
		t.Run(name, func(t *testing.T) {
			s := targets[name](t)
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			data := benchData(3<<20 + 17)
			if err := storage.WriteFile(ctx, s, "sized", data); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			r, err := s.Open(ctx, "sized")
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			sr, ok := r.(interface{ Stat() (fs.FileInfo, error) })
			if !ok {
				t.Fatalf("the reader of %s/sized is a %T, which has no Stat method", s.URI(), r)
			}
			fi, err := sr.Stat()
			if err != nil || fi.Size() != int64(len(data)) {
				t.Fatalf("Stat of the reader of %s/sized = %v, %v; want size %d", s.URI(), fi, err, len(data))
			}
			got, err := storage.ReadFile(ctx, s, "sized")
			if err != nil || string(got) != string(data) {
				t.Fatalf("ReadFile(%s/sized) = %d bytes, %v; want the %d bytes written", s.URI(), len(got), err, len(data))
			}
		})
	}
}
