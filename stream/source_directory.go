package stream

// Directory is a bounded source of the lines of every regular file in Dir. A file larger
// than the split size is read as byte ranges by several readers (lines are cut at the
// range ends as Hadoop's TextInputFormat cuts them), so a few large files keep every
// subtask busy and the readers end close together; progress is the offset of the next line.
type Directory struct {
	// Dir is a local path, a file:///path URI or an hdfs://namenode:port/path URI.
	Dir string
	// SplitSize is the size of a range of a large file in bytes. 0 chooses it from the
	// directory's size and the parallelism: about 16 ranges per subtask, between
	// MinAutoSplitSize and MaxAutoSplitSize. A negative size reads every file whole.
	SplitSize int64
}

// The bounds of the split size Directory chooses when SplitSize is 0. Every assignment of
// splits waits for the AM's durable split log (on file://, a rewrite and two fsyncs), so a
// range must be worth an assignment: cutting 2.5 MB files into 128 KiB ranges (80 splits,
// 29 assignments) made a 2M-word WordCount slower, 327 -> 347 ms, and raised the
// AM's CPU from about 45 to 80 ms. 32 MiB is Hadoop's block size for local files
// (fs.local.block.size).
const (
	MinAutoSplitSize = 32 << 20
	MaxAutoSplitSize = 256 << 20
	// autoSplitsPerReader: with about this many ranges per subtask and guided shares, the
	// last ranges go out one at a time and each is a small part of a subtask's work.
	autoSplitsPerReader = 16
)

// DirectorySource adds a directory source emitting one string per line.
func DirectorySource(j *Job, name string, src Directory) DataStream[string] {
	return FromSource(j, name, src, NoWatermarks[string]())
}

// CreateEnumerator lists the directory and cuts its large files into ranges. Readers get
// the splits in guided shares (QueueEnumerator.Guided): a directory of many small files is
// not read one AM round trip per file.
func (d Directory) CreateEnumerator(restored []byte, parallelism int) (SplitEnumerator, error) {
	if restored != nil {
		e, err := NewQueueEnumerator(nil, restored)
		if err != nil {
			return nil, err
		}
		return e.Guided(parallelism), nil
	}
	files, err := listFiles(d.Dir)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	size := d.splitSize(total, parallelism)
	var splits []Split
	for _, f := range files {
		for _, r := range fileRanges(f.path, f.size, size) {
			splits = append(splits, r.encode())
		}
	}
	e, err := NewQueueEnumerator(splits, nil)
	if err != nil {
		return nil, err
	}
	return e.Guided(parallelism), nil
}

// splitSize is the range size for total bytes read by parallelism subtasks; 0: whole files.
func (d Directory) splitSize(total int64, parallelism int) int64 {
	switch {
	case d.SplitSize < 0:
		return 0
	case d.SplitSize > 0:
		return d.SplitSize
	}
	return min(max(total/int64(autoSplitsPerReader*max(parallelism, 1)), MinAutoSplitSize), MaxAutoSplitSize)
}
