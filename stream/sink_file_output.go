package stream

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tidestream/tide/storage"
)

// Output is one directory a FileSink writes into.
type Output struct {
	// Sink is the sink operator's name.
	Sink string
	// Dir is the directory as the job gave it.
	Dir string
	// URI is the storage URI the sink writes through (file:///… or hdfs://…); empty for a
	// relative local path, which each TaskManager resolves against its working directory.
	URI string
}

// Relative reports whether the output is a relative local path.
func (o Output) Relative() bool { return o.URI == "" }

// ErrRelativeOutput: a relative local output path, which a cluster whose TaskManagers run
// in throw-away working directories (YARN containers) would lose.
var ErrRelativeOutput = errors.New("relative local output path")

// CheckForCluster refuses an output a cluster would lose: a relative local path. cluster names
// it in the message ("YARN").
func (o Output) CheckForCluster(cluster string) error {
	if !o.Relative() {
		return nil
	}
	return fmt.Errorf("file sink %q: %w %q: on %s it would land in the TaskManager container's working directory, which %s deletes when the container ends; give hdfs://namenode:port/dir, hdfs:///dir (fs.defaultFS) or an absolute path",
		o.Sink, ErrRelativeOutput, o.Dir, cluster, cluster)
}

// schemeRE matches a URI scheme (two or more characters, so "C:" is not one).
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)

// ParseOutput parses a FileSink directory: a storage URI (file:///abs, hdfs://nn:port/dir,
// hdfs:///dir), an absolute local path or a relative local path. Any other scheme is an
// error, as is anything that looks like a scheme ("hdfs:/x" is hdfs, "s3://b" refused): a
// local directory whose name contains a colon is written ./name.
func ParseOutput(sink, dir string) (Output, error) {
	o := Output{Sink: sink, Dir: dir}
	switch {
	case dir == "":
		return o, fmt.Errorf("file sink %q: empty output directory", sink)
	case schemeRE.MatchString(dir):
		if err := storage.CheckURI(dir); err != nil {
			return o, fmt.Errorf("file sink %q: output %q: %w (the file sink writes to file:// and hdfs://; a local directory whose name has a colon is written ./name)", sink, dir, err)
		}
		o.URI = dir
	case strings.ContainsAny(dir, "\x00\n\r"):
		return o, fmt.Errorf("file sink %q: output %q: NUL or newline in the path", sink, dir)
	case filepath.IsAbs(dir):
		o.URI = (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(dir))}).String()
	}
	return o, nil
}

// resolve is the URI to open on this process: a relative path resolves against the
// working directory.
func (o Output) resolve() (string, error) {
	if o.URI != "" {
		return o.URI, nil
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return "", fmt.Errorf("file sink %q: resolving %q: %w", o.Sink, o.Dir, err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// OutputURI is the storage URI of a FileSink directory as this process would resolve it.
func OutputURI(dir string) (string, error) {
	o, err := ParseOutput("output", dir)
	if err != nil {
		return "", err
	}
	return o.resolve()
}
