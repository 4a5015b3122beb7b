package stream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
)

// maxLineBytes bounds a line of a directory source's file.
const maxLineBytes = 16 << 20

// CreateReader reads the splits' lines.
func (d Directory) CreateReader(rc ReaderContext) (SourceReader, error) {
	return &dirReader{pull: splitPuller{rc: rc}}, nil
}

type dirReader struct {
	pull   splitPuller
	splits []fileSplit
	files  fileOpener
	file   io.ReadCloser
	in     *bufio.Reader
	long   []byte             // a line longer than in's buffer, gathered
	outs   typedCache[string] // lines go to a typed chain unboxed
}

func (r *dirReader) Start(context.Context) error {
	r.request()
	return nil
}

// request asks for more splits unless the reader holds a split beyond the one it reads
// (r.splits[0]): asking while a split is still being read hides the round trip to the AM,
// so the reader does not stop between splits.
func (r *dirReader) request() { r.pull.request(len(r.splits), 1) }

func (r *dirReader) AddSplits(splits []Split) {
	r.pull.added(len(splits))
	for _, sp := range splits {
		s, err := decodeFileSplit(sp)
		if err != nil {
			panic(err) // splits come from our own enumerator; a bad one is a bug
		}
		r.splits = append(r.splits, s)
	}
}

func (r *dirReader) NotifyNoMoreSplits() { r.pull.ended() }

// open opens the current split's file at its position: a range not yet begun skips its
// first line (the range before reads it), and a split checkpointed before ranges skips the
// lines it had read.
func (r *dirReader) open(ctx context.Context) error {
	s := &r.splits[0]
	f, err := r.files.open(ctx, s.path, s.pos)
	if err != nil {
		return fmt.Errorf("directory source: opening split %s at byte %d: %w", s.id(), s.pos, err)
	}
	r.file, r.in = f, bufio.NewReaderSize(f, 64<<10)
	skip := s.skipLines
	if s.pos == s.start && s.start > 0 {
		skip = 1
	}
	for ; skip > 0; skip-- {
		line, err := r.readLine()
		s.pos += int64(len(line))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("directory source: reading %s at byte %d: %w", s.path, s.pos, err)
		}
	}
	s.skipLines = 0
	return nil
}

// readLine returns the next line with its line feed (none at the end of the file), valid
// until the next call, and io.EOF once the file ends, with the last line if it had no
// line feed.
func (r *dirReader) readLine() ([]byte, error) {
	line, err := r.in.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	r.long = append(r.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(r.long) > maxLineBytes {
			return nil, fmt.Errorf("a line longer than %d bytes", maxLineBytes)
		}
		line, err = r.in.ReadSlice('\n')
		r.long = append(r.long, line...)
	}
	return r.long, err
}

func (r *dirReader) closeFile() error {
	if r.file == nil {
		return nil
	}
	err := r.file.Close()
	r.file, r.in, r.long = nil, nil, nil
	return err
}

// finishSplit closes the current split's file and moves on to the next split.
func (r *dirReader) finishSplit() (InputStatus, error) {
	s := &r.splits[0]
	if err := r.closeFile(); err != nil {
		return NothingAvailable, fmt.Errorf("directory source: closing %s: %w", s.path, err)
	}
	r.splits = r.splits[1:]
	r.pull.finished()
	r.request()
	return MoreAvailable, nil
}

func (r *dirReader) Poll(ctx context.Context, out Collector) (InputStatus, error) {
	if len(r.splits) == 0 {
		if r.pull.noMore {
			return EndOfInput, nil
		}
		r.request()
		return NothingAvailable, nil
	}
	if r.in == nil {
		if err := r.open(ctx); err != nil {
			return NothingAvailable, err
		}
		r.request() // the next split, while this one is read
	}
	s := &r.splits[0]
	for range 256 {
		if s.end >= 0 && s.pos > s.end {
			return r.finishSplit() // the next line starts in the next range
		}
		line, err := r.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return NothingAvailable, fmt.Errorf("directory source: reading %s at byte %d: %w", s.path, s.pos, err)
		}
		if len(line) == 0 {
			return r.finishSplit() // the end of the file
		}
		s.pos += int64(len(line))
		if err := r.outs.collect(out, string(trimLineEnd(line)), NoTimestamp); err != nil {
			return NothingAvailable, err
		}
	}
	return MoreAvailable, nil
}

// trimLineEnd drops a line's line feed and a carriage return before it, as
// bufio.ScanLines does.
func trimLineEnd(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

func (r *dirReader) SnapshotState(int64) ([]Split, error) {
	out := make([]Split, 0, len(r.splits))
	for _, s := range r.splits {
		out = append(out, s.encode())
	}
	return out, nil
}

func (r *dirReader) Close() error { return errors.Join(r.closeFile(), r.files.close()) }
