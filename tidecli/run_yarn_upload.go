package tidecli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tidestream/tide/storage"
)

// progressMinBytes: files at least this big (the job binary) get progress lines when tide
// run stages them; the configuration files go up silently.
const progressMinBytes = 1 << 20

// uploadProgress is the YARN staging storage as tide run uses it: a big file prints a line
// when its upload to HDFS starts and one when it is done, so that the user sees what the pause
// before "Submitted application" is. Retried upload sessions stay out of the terminal (the
// storage's logger is quietRetries); an upload that fails ends tide run with its error.
type uploadProgress struct {
	storage.Storage
	out io.Writer
}

func (p uploadProgress) Create(ctx context.Context, name string) (storage.Writer, error) {
	w, err := p.Storage.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &progressWriter{Writer: w, out: p.out, uri: p.URI() + "/" + name}, nil
}

// progressWriter counts the bytes of one staged file and reports its upload on Commit.
type progressWriter struct {
	storage.Writer
	out io.Writer
	uri string
	n   int64
}

func (w *progressWriter) Write(b []byte) (int, error) {
	n, err := w.Writer.Write(b)
	w.n += int64(n)
	return n, err
}

func (w *progressWriter) Commit(ctx context.Context) error {
	if w.n < progressMinBytes {
		return w.Writer.Commit(ctx)
	}
	fmt.Fprintf(w.out, "Uploading %s (%.1f MB) ...\n", termSafe(w.uri), float64(w.n)/1e6)
	start := time.Now()
	if err := w.Writer.Commit(ctx); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(w.out, "Uploaded %.1f MB in %s (%.1f MB/s)\n", float64(w.n)/1e6, took.Round(time.Millisecond),
		float64(w.n)/1e6/max(took.Seconds(), 1e-3))
	return nil
}
