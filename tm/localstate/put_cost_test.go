package localstate

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
)

// BenchmarkPutCostAgainstUpload measures, in one run on the same fresh files (64 MiB in
// 16 tables), what a Put of new tables costs (hard links plus the checksum read,
// checksum.go) next to the upload it accompanies (the copy to file:// checkpoint
// storage a checkpoint makes) and next to an fsync of the same files (the alternative
// this store does not take). It reports each as a ratio of the upload.
func BenchmarkPutCostAgainstUpload(b *testing.B) {
	const tables, size = 16, 4 << 20
	ctx := context.Background()
	var upload, put, fsync time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src := b.TempDir()
		var files []File
		for j := range tables {
			p := filepath.Join(src, fmt.Sprintf("%06d.sst", j))
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyN(f, rand.Reader, size); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			files = append(files, File{Handle: fmt.Sprintf("job/shared/%d-%06d.sst", i, j), Path: p})
		}
		st, err := storage.Open(ctx, "file://"+b.TempDir(), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		t0 := time.Now()
		for _, f := range files {
			in, err := os.Open(f.Path)
			if err != nil {
				b.Fatal(err)
			}
			w, err := st.Create(ctx, f.Handle)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(w, in); err != nil {
				b.Fatal(err)
			}
			_ = in.Close()
			if err := w.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if err := s.Put(Key{Job: "job", Vertex: "map", KeyGroupEnd: 127, Checkpoint: int64(i + 1)}, files); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		for _, f := range files {
			fh, err := os.OpenFile(f.Path, os.O_RDWR, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := fh.Sync(); err != nil {
				b.Fatal(err)
			}
			_ = fh.Close()
		}
		t3 := time.Now()
		upload += t1.Sub(t0)
		put += t2.Sub(t1)
		fsync += t3.Sub(t2)

		b.StopTimer()
		_ = s.Close()
		_ = st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(upload.Milliseconds())/float64(b.N), "upload-ms/op")
	b.ReportMetric(put.Seconds()/upload.Seconds(), "put/upload")
	b.ReportMetric(fsync.Seconds()/upload.Seconds(), "fsync/upload")
}
