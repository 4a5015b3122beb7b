package exec

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/tm/snapshot"
)

// BenchmarkStateBackends measures one subtask's keyed state of 100 MiB (and 1 GiB with
// TIDE_BENCH_STATE_1G=1) on the code paths a checkpoint and a restore take: the full
// pebble checkpoint (a view streamed into one state file), incremental checkpoints (a
// Pebble checkpoint, new tables uploaded) before and after 1% of the keys changed, the
// heap backend's checkpoint of the same entries (a copy-on-write view at the barrier,
// streamed into its state file), and a plain copy of the same number of
// bytes; restores from checkpoint storage and from local files at the same key groups,
// and of half the key groups; state updates per second while an upload runs against
// without; the process's peak RSS. Storage is file:// and, with the mini-cluster
// (TIDE_HADOOP_ENV), hdfs://. Run with -benchtime 1x: every figure is printed.
func BenchmarkStateBackends(b *testing.B) {
	sizes := []int64{100 << 20}
	if os.Getenv("TIDE_BENCH_STATE_1G") == "1" {
		sizes = append(sizes, 1<<30)
	}
	stores := []string{"file"}
	if os.Getenv("TIDE_HADOOP_ENV") != "" {
		stores = append(stores, "hdfs")
	}
	for _, size := range sizes {
		for _, kind := range stores {
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, kind), func(b *testing.B) {
				for range b.N {
					benchState(b, size, kind)
				}
			})
		}
	}
}

const (
	benchMaxP   = 128
	benchValue  = 1000
	benchPrefix = "op/count"
)

func benchKey(i int) []byte { return fmt.Appendf(nil, "key-%012d", i) }

func benchStorage(b *testing.B, kind string) storage.Storage {
	ctx := context.Background()
	uri := "file://" + b.TempDir()
	if kind == "hdfs" {
		env := hadooptest.Require(b)
		uri = fmt.Sprintf("%s/tide-bench/state-%d", env.URI, time.Now().UnixNano())
	}
	st, err := storage.Open(ctx, uri, storage.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if kind == "hdfs" {
			_ = st.Delete(context.Background(), "job")
		}
		st.Close()
	})
	return st
}

func benchState(b *testing.B, size int64, kind string) {
	ctx := context.Background()
	st := benchStorage(b, kind)
	dir := b.TempDir()
	n := int(size / (benchValue + 20))
	be, err := state.OpenPebble(state.PebbleOptions{Dir: dir, Name: "bench", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	val := make([]byte, benchValue)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range val {
		val[i] = byte(rng.IntN(256))
	}
	// Every value differs (random bytes), so the tables do not compress below the state.
	for i := range n {
		randomize(rng, val)
		if err := be.Put(i%benchMaxP, benchPrefix, benchKey(i), val); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("\nkeyed state %d MiB (%d keys of %d bytes, %d key groups), checkpoint storage %s\n", size>>20, n, benchValue, benchMaxP, st.URI())
	mb := func(v int64) string { return fmt.Sprintf("%.1f MB", float64(v)/1e6) }

	// Full checkpoint: a view at the barrier, the file streamed from it.
	t0 := time.Now()
	v, err := be.View()
	if err != nil {
		b.Fatal(err)
	}
	fullSync := time.Since(t0)
	fullBytes := writeFullFrom(b, st, "job/chk-1/count-0.state", v)
	fullTotal := time.Since(t0)
	_ = v.Close()

	// Incremental: everything once, then after 1% of the keys changed.
	up := map[string]bool{}
	var incrUpload func(id int, ck string, pending *state.PendingCheckpoint) (int64, string, []state.DBFile)
	// incrBarrier takes checkpoint id's barrier part (on the goroutine that updates the
	// state, as a subtask does) and returns its upload.
	incrBarrier := func(id int) func() (int64, string, []state.DBFile) {
		ck := filepath.Join(dir, fmt.Sprintf("ckpt-%d", id))
		pending, err := be.CheckpointAsync(ck)
		if err != nil {
			b.Fatal(err)
		}
		return func() (int64, string, []state.DBFile) { return incrUpload(id, ck, pending) }
	}
	incr := func(id int) (time.Duration, time.Duration, int64, string, []state.DBFile) {
		t0 := time.Now()
		upload := incrBarrier(id)
		sync := time.Since(t0)
		bytes, ck, files := upload()
		return sync, time.Since(t0), bytes, ck, files
	}
	incrUpload = func(id int, ck string, pending *state.PendingCheckpoint) (int64, string, []state.DBFile) {
		files, err := pending.Wait()
		if err != nil {
			b.Fatal(err)
		}
		var bytes int64
		for _, f := range files {
			name := fmt.Sprintf("job/chk-%d/db-%s", id, f.Name)
			if f.Table {
				name = "job/shared/" + f.Name
				if up[name] {
					continue
				}
				up[name] = true
			}
			if err := uploadLocalFile(ctx, st, filepath.Join(ck, f.Name), name); err != nil {
				b.Fatal(err)
			}
			bytes += f.Size
		}
		return bytes, ck, files
	}
	i1Sync, i1Total, i1Bytes, _, _ := incr(2)
	for range n / 100 {
		k := rng.IntN(n)
		randomize(rng, val)
		if err := be.Put(k%benchMaxP, benchPrefix, benchKey(k), val[:benchValue-1]); err != nil {
			b.Fatal(err)
		}
	}
	i2Sync, i2Total, i2Bytes, i2Dir, i2Files := incr(3)

	// The heap backend as its checkpoints run: the entries in its copy-on-write table
	// (state.KeyGroupMap), a view taken at the barrier (the synchronous part), then
	// streamed into the state file in storage (tm/snapshot's deferred writes).
	heap := &state.KeyGroupMap[string, []byte]{Copy: func(v *[]byte) (*[]byte, error) { c := slices.Clone(*v); return &c, nil }}
	for i := range n {
		v := make([]byte, benchValue)
		randomize(rng, v)
		k := benchKey(i)
		heap.Put(len(k)%benchMaxP, string(k), &v)
	}
	t0 = time.Now()
	w := &snapshot.Writer{}
	w.AllowDeferred()
	ow := w.Operator("op").(stream.AsyncStateWriter)
	view := heap.Snapshot()
	ow.Defer(func(sw stream.StateWriter) error {
		return view.Range(0, benchMaxP-1, func(kg int, k string, v *[]byte) error {
			sw.Keyed("count", kg, []byte(k), *v)
			return nil
		})
	}, view.Release)
	heapSync := time.Since(t0)
	out, err := st.Create(ctx, "job/chk-4/count-0.state")
	if err != nil {
		b.Fatal(err)
	}
	heapBytes, err := w.EncodeTo(out, snapshot.Header{Vertex: "count", Parallelism: 1, MaxParallelism: benchMaxP, KeyGroupEnd: benchMaxP - 1, Checkpoint: 4, Attempt: 1}, nil)
	if err == nil {
		err = out.Commit(ctx)
	}
	if err != nil {
		b.Fatal(err)
	}
	heapTotal := time.Since(t0)
	heap, w = nil, nil

	// A plain copy of the heap checkpoint's bytes.
	plain := filepath.Join(dir, "plain")
	downloadTo(b, st, "job/chk-4/count-0.state", plain)
	t0 = time.Now()
	if err := uploadLocalFile(ctx, st, plain, "job/plain"); err != nil {
		b.Fatal(err)
	}
	copyUp := time.Since(t0)

	fmt.Printf("  checkpoint                              sync part   total     uploaded\n")
	fmt.Printf("  pebble full (view, streamed file)     %9s %9s  %s\n", rd(fullSync), rd(fullTotal), mb(fullBytes))
	fmt.Printf("  pebble incremental, first             %9s %9s  %s\n", rd(i1Sync), rd(i1Total), mb(i1Bytes))
	fmt.Printf("  pebble incremental, 1%% keys changed   %9s %9s  %s = %.2f%% of the full one (goal <= 5%%)\n", rd(i2Sync), rd(i2Total), mb(i2Bytes), 100*float64(i2Bytes)/float64(fullBytes))
	fmt.Printf("  heap backend full (view, streamed)    %9s %9s  %s\n", rd(heapSync), rd(heapTotal), mb(heapBytes))
	fmt.Printf("  plain copy of %s                          %9s\n", mb(heapBytes), rd(copyUp))

	// Restores of checkpoint 3 (incremental): from storage and from its local files.
	allFiles := func(from, to int) (state.RestoreSource, int64) {
		rs := state.RestoreSource{Files: map[string]string{}, Placeholders: map[string]int64{}}
		dl := filepath.Join(dir, fmt.Sprintf("dl-%d-%d", from, to))
		_ = os.MkdirAll(dl, 0o700)
		var bytes int64
		for _, f := range i2Files {
			if f.Table && !f.Overlaps(from, to) {
				rs.Placeholders[f.Name] = f.Size
				continue
			}
			name := fmt.Sprintf("job/chk-3/db-%s", f.Name)
			if f.Table {
				name = "job/shared/" + f.Name
			}
			p := filepath.Join(dl, f.Name)
			downloadTo(b, st, name, p)
			rs.Files[f.Name] = p
			bytes += f.Size
		}
		return rs, bytes
	}
	// restore opens the instance and reads one key (its Close, which waits for the
	// compactions the restored instance starts, is not counted: the subtask runs on).
	var toClose []*state.PebbleBackend
	defer func() {
		for _, r := range toClose {
			_ = r.Close()
		}
	}()
	restore := func(from, to int, src state.RestoreSource) {
		r, err := state.OpenPebbleFromCheckpoints(ctx, state.PebbleOptions{Dir: dir, Name: "restore", Logger: slog.New(slog.DiscardHandler)}, from, to, src, nil)
		if err != nil {
			b.Fatal(err)
		}
		toClose = append(toClose, r)
		if _, ok, err := r.Get(5%benchMaxP, benchPrefix, benchKey(5)); err != nil || (!ok && from == 0) {
			b.Fatalf("restored state lacks key 5: %v", err)
		}
	}
	t0 = time.Now()
	rs, rsBytes := allFiles(0, benchMaxP-1)
	download := time.Since(t0)
	restore(0, benchMaxP-1, rs)
	fromStorage := time.Since(t0)
	local := state.RestoreSource{Files: map[string]string{}}
	for _, f := range i2Files {
		local.Files[f.Name] = filepath.Join(i2Dir, f.Name)
	}
	t0 = time.Now()
	restore(0, benchMaxP-1, local)
	fromLocal := time.Since(t0)
	t0 = time.Now()
	half, halfBytes := allFiles(0, benchMaxP/2-1)
	restore(0, benchMaxP/2-1, half)
	halfTime := time.Since(t0)
	t0 = time.Now()
	hd, err := storage.ReadFile(ctx, st, "job/chk-4/count-0.state")
	if err == nil {
		_, err = snapshot.Parse(hd)
	}
	if err != nil {
		b.Fatal(err)
	}
	heapRestore := time.Since(t0)
	hd = nil
	t0 = time.Now()
	downloadTo(b, st, "job/plain", filepath.Join(dir, "plain-back"))
	copyDown := time.Since(t0)
	fmt.Printf("  restore (incremental checkpoint)      from storage %s (download of its %s alone %s), from local files %s: %.1fx faster than from storage, %.1fx faster than the download alone (goal >= 5x)\n",
		rd(fromStorage), mb(rsBytes), rd(download), rd(fromLocal), float64(fromStorage)/float64(fromLocal), float64(download)/float64(fromLocal))
	fmt.Printf("  restore of half the key groups        %s, %s downloaded of %s (tables holding none of them skipped)\n", rd(halfTime), mb(halfBytes), mb(i2Bytes+i1Bytes))
	fmt.Printf("  restore heap backend (read, parse)    %s; plain download of the same bytes %s\n", rd(heapRestore), rd(copyDown))

	// State updates per second on the subtask's goroutine, steady and while an upload runs.
	steady := updatesPerSecond(b, be, n, nil)
	duringFull := updatesPerSecond(b, be, n, func() func() {
		v, err := be.View()
		if err != nil {
			b.Fatal(err)
		}
		return func() {
			writeFullFrom(b, st, "job/chk-5/count-0.state", v)
			_ = v.Close()
		}
	})
	duringIncr := updatesPerSecond(b, be, n, func() func() {
		upload := incrBarrier(6)
		return func() { upload() }
	})
	fmt.Printf("  state updates/s: steady %.0f, during a full upload %.0f (%.2f), during an incremental one %.0f (%.2f) (raw backend writes in one goroutine against an upload at normal priority in the same process; a job's records/s during a checkpoint, with the TaskManager's niced uploads, against the goal of >= 0.80: BenchmarkCheckpointThroughput)\n",
		steady, duringFull, duringFull/steady, duringIncr, duringIncr/steady)
	fmt.Printf("  process RSS: %s\n", rss())
}

// writeFullFrom streams a view into one state file, as an asynchronous full checkpoint does.
func writeFullFrom(b *testing.B, st storage.Storage, name string, v state.View) int64 {
	src := func(fn func(op, s string, kg int, key, value []byte) error) error {
		return v.IterateRange(0, benchMaxP-1, func(kg int, bname string, key, value []byte) error {
			op, s, _ := strings.Cut(bname, "/")
			return fn(op, s, kg, key, value)
		})
	}
	fw, err := st.Create(context.Background(), name)
	if err != nil {
		b.Fatal(err)
	}
	w := &snapshot.Writer{}
	n, err := w.EncodeTo(fw, snapshot.Header{Vertex: "count", Parallelism: 1, MaxParallelism: benchMaxP, KeyGroupEnd: benchMaxP - 1, Checkpoint: 1, Attempt: 1}, src)
	if err == nil {
		err = fw.Commit(context.Background())
	}
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func downloadTo(b *testing.B, st storage.Storage, name, path string) {
	rc, err := st.Open(context.Background(), name)
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// updatesPerSecond takes a checkpoint's barrier part on this goroutine, as the subtask
// that owns the backend does, runs the upload it returns in the background (barrier nil:
// 2 s of nothing) while this goroutine updates random keys, and returns the updates per
// second while the upload ran.
func updatesPerSecond(b *testing.B, be *state.PebbleBackend, n int, barrier func() (upload func())) float64 {
	var done atomic.Bool
	end := make(chan struct{})
	var background func()
	if barrier != nil {
		background = barrier() // on this goroutine: the backend is the subtask's
	}
	go func() {
		defer close(end)
		if background == nil {
			time.Sleep(2 * time.Second)
		} else {
			background()
		}
		done.Store(true)
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	val := make([]byte, benchValue)
	t0 := time.Now()
	ops := 0
	for !done.Load() {
		k := rng.IntN(n)
		if err := be.Put(k%benchMaxP, benchPrefix, benchKey(k), val); err != nil {
			b.Fatal(err)
		}
		ops++
	}
	<-end
	return float64(ops) / time.Since(t0).Seconds()
}

func randomize(rng *rand.Rand, b []byte) {
	for i := 0; i+8 <= len(b); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

func rd(d time.Duration) string { return d.Round(time.Millisecond).String() }

// rss reads the process's current and peak resident set from /proc.
func rss() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	var cur, peak string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			cur = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peak = strings.TrimSpace(v)
		}
	}
	return fmt.Sprintf("%s now, %s peak (the whole benchmark process, heap map of the same entries included)", cur, peak)
}
