package examples

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tidestream/tide/stream"
)

// ballastFn is CheckableCount's --ballast step: the first time a subtask meets a key it
// stores --ballast bytes of incompressible filler for it in keyed state, then passes every
// number on unchanged. The job's keyed state then weighs keys × ballast bytes whatever
// the input, which the warm-up benchmark (make bench) uses to move 1 MiB, 100 MiB or
// 1 GiB of state; the answer stays the same.
//
// With --progress FILE every subtask of the step also appends "attempt subtask
// unix-nanoseconds" to FILE for its first record and then at most once a millisecond: the
// benchmark reads from it when the last record before a switch and the first after it were
// processed.
type ballastFn struct {
	size     int
	progress string

	filler *stream.ValueState[int64, []byte]
	marked *stream.ValueState[int64, int64]
	have   map[int64]bool // keys whose filler is known to be stored (this attempt)

	out          *os.File
	attempt      int64
	subtask      int
	lastProgress time.Time
	line         []byte
}

func newBallastFn(size int, progress string) func() stream.KeyedProcessFunction[int64, int64, int64] {
	return func() stream.KeyedProcessFunction[int64, int64, int64] {
		return &ballastFn{size: size, progress: progress, have: map[int64]bool{}}
	}
}

func (b *ballastFn) Open(rt stream.Runtime) ([]stream.StateView, error) {
	b.filler = stream.NewValueState[int64, []byte](rt, "ballast", stream.BytesCodec{}, stream.TTLConfig{})
	b.marked = stream.NewValueState[int64, int64](rt, "ballast-stored", stream.Int64Codec{}, stream.TTLConfig{})
	b.attempt, b.subtask = rt.Attempt, rt.Subtask
	if b.progress != "" {
		f, err := progressFile(b.progress)
		if err != nil {
			return nil, err
		}
		b.out = f
	}
	return []stream.StateView{b.filler, b.marked}, nil
}

func (b *ballastFn) ProcessElement(key, n int64, ts int64, emit func(int64, int64)) error {
	if b.out != nil {
		if now := time.Now(); now.Sub(b.lastProgress) >= time.Millisecond {
			b.lastProgress = now
			b.line = strconv.AppendInt(b.line[:0], b.attempt, 10)
			b.line = append(b.line, ' ')
			b.line = strconv.AppendInt(b.line, int64(b.subtask), 10)
			b.line = append(b.line, ' ')
			b.line = strconv.AppendInt(b.line, now.UnixNano(), 10)
			b.line = append(b.line, '\n')
			if _, err := b.out.Write(b.line); err != nil {
				return fmt.Errorf("job %s: --progress: %w", CheckableCountName, err)
			}
		}
	}
	if !b.have[key] {
		_, stored, err := b.marked.Value(key)
		if err != nil {
			return err
		}
		if !stored {
			if err := b.filler.Update(key, filler(key, b.size)); err != nil {
				return err
			}
			if err := b.marked.Update(key, 1); err != nil {
				return err
			}
		}
		b.have[key] = true
	}
	emit(n, ts)
	return nil
}

// filler is size bytes of xorshift output seeded by key: the same for a key on every
// TaskManager, and not compressible by the backend.
func filler(key int64, size int) []byte {
	out := make([]byte, size)
	x := uint64(key)*0x9e3779b97f4a7c15 | 1
	for i := 0; i < size; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		for j := 0; j < 8 && i+j < size; j++ {
			out[i+j] = byte(x >> (8 * j))
		}
	}
	return out
}

// progressFiles are the --progress files this process appends to, one handle per path
// shared by its subtasks (each line is one write on an O_APPEND file, so lines do not mix).
var progressFiles struct {
	sync.Mutex
	m map[string]*os.File
}

func progressFile(path string) (*os.File, error) {
	progressFiles.Lock()
	defer progressFiles.Unlock()
	if f, ok := progressFiles.m[path]; ok {
		return f, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("job %s: --progress: %w", CheckableCountName, err)
	}
	if progressFiles.m == nil {
		progressFiles.m = map[string]*os.File{}
	}
	progressFiles.m[path] = f
	return f, nil
}
