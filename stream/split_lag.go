package stream

// SplitLag is how far a source split is behind: the records it still has to read.
type SplitLag struct {
	Split   string
	Records int64
}

// SplitLagReporter is implemented by a SourceReader that knows how far behind its splits
// are (a bounded split knows its end; a Kafka split its high watermark). The TaskManager
// samples it between polls, on the reader's goroutine, and reports it as task metrics.
type SplitLagReporter interface {
	SplitLag() []SplitLag
}
