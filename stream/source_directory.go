package stream

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Directory is a bounded source of the lines of every regular file in Dir (one split per
// file; progress is the number of lines read).
type Directory struct {
	Dir string
}

// DirectorySource adds a directory source emitting one string per line.
func DirectorySource(j *Job, name string, src Directory) DataStream[string] {
	return FromSource(j, name, src, NoWatermarks[string]())
}

// CreateEnumerator lists the directory. Readers get its files in guided shares
// (QueueEnumerator.Guided): a directory of many small files is not read one AM round trip
// per file.
func (d Directory) CreateEnumerator(restored []byte, parallelism int) (SplitEnumerator, error) {
	if restored != nil {
		e, err := NewQueueEnumerator(nil, restored)
		if err != nil {
			return nil, err
		}
		return e.Guided(parallelism), nil
	}
	entries, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, fmt.Errorf("directory source: listing %s: %w", d.Dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name()[0] != '.' {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	splits := make([]Split, 0, len(names))
	for _, n := range names {
		splits = append(splits, fileSplit{path: filepath.Join(d.Dir, n)}.encode())
	}
	e, err := NewQueueEnumerator(splits, nil)
	if err != nil {
		return nil, err
	}
	return e.Guided(parallelism), nil
}

type fileSplit struct {
	path string
	line int64
}

func (s fileSplit) encode() Split {
	b := binary.AppendVarint(nil, s.line)
	b = append(b, s.path...)
	return Split{ID: s.path, Data: b}
}

func decodeFileSplit(sp Split) (fileSplit, error) {
	d := NewDecoder(sp.Data)
	line := d.Varint()
	if d.Err() != nil {
		return fileSplit{}, fmt.Errorf("decoding file split %q: %w", sp.ID, d.Err())
	}
	return fileSplit{path: string(sp.Data[len(sp.Data)-d.Remaining():]), line: line}, nil
}

// CreateReader reads files line by line.
func (d Directory) CreateReader(rc ReaderContext) (SourceReader, error) {
	return &dirReader{rc: rc}, nil
}

type dirReader struct {
	rc      ReaderContext
	splits  []fileSplit
	noMore  bool
	waiting bool
	file    *os.File
	scanner *bufio.Scanner
	outs    typedCache[string] // lines go to a typed chain unboxed
}

func (r *dirReader) Start(context.Context) error {
	r.request()
	return nil
}

// request asks for more splits unless an answer is on its way, none are left, or the
// reader holds a split beyond the one it reads (r.splits[0]). Asking while a split is
// still being read hides the round trip to the AM, whose answer waits for the split
// assignment log to be durable (a file's fsyncs, or an HDFS write), so the reader does not
// stop between files.
func (r *dirReader) request() {
	if !r.waiting && !r.noMore && len(r.splits) <= 1 {
		r.waiting = true
		r.rc.RequestSplit()
	}
}

func (r *dirReader) AddSplits(splits []Split) {
	r.waiting = false
	for _, sp := range splits {
		s, err := decodeFileSplit(sp)
		if err != nil {
			panic(err) // splits come from our own enumerator; a bad one is a bug
		}
		r.splits = append(r.splits, s)
	}
}

func (r *dirReader) NotifyNoMoreSplits() { r.noMore, r.waiting = true, false }

// open opens the current split's file and skips the lines already read.
func (r *dirReader) open() error {
	s := &r.splits[0]
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("directory source: opening split %s: %w", s.path, err)
	}
	r.file = f
	r.scanner = bufio.NewScanner(f)
	r.scanner.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for i := int64(0); i < s.line; i++ {
		if !r.scanner.Scan() {
			break
		}
	}
	return nil
}

func (r *dirReader) closeFile() error {
	if r.file == nil {
		return nil
	}
	err := r.file.Close()
	r.file, r.scanner = nil, nil
	return err
}

func (r *dirReader) Poll(_ context.Context, out Collector) (InputStatus, error) {
	if len(r.splits) == 0 {
		if r.noMore {
			return EndOfInput, nil
		}
		r.request()
		return NothingAvailable, nil
	}
	if r.scanner == nil {
		if err := r.open(); err != nil {
			return NothingAvailable, err
		}
		r.request() // the next split, while this one is read
	}
	s := &r.splits[0]
	for range 256 {
		if !r.scanner.Scan() {
			if err := r.scanner.Err(); err != nil {
				return NothingAvailable, fmt.Errorf("directory source: reading %s at line %d: %w", s.path, s.line+1, err)
			}
			if err := r.closeFile(); err != nil {
				return NothingAvailable, fmt.Errorf("directory source: closing %s: %w", s.path, err)
			}
			r.splits = r.splits[1:]
			r.request()
			return MoreAvailable, nil
		}
		s.line++
		if err := r.outs.collect(out, r.scanner.Text(), NoTimestamp); err != nil {
			return NothingAvailable, err
		}
	}
	return MoreAvailable, nil
}

func (r *dirReader) SnapshotState(int64) ([]Split, error) {
	out := make([]Split, 0, len(r.splits))
	for _, s := range r.splits {
		out = append(out, s.encode())
	}
	return out, nil
}

func (r *dirReader) Close() error { return r.closeFile() }
