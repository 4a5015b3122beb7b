package localstate

import (
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
)

// The files of an entry are not fsynced: pebble writes its tables without fsync (their
// durability is the checkpoint's, in checkpoint storage) and the store hard-links them.
// Within the process that wrote them the page cache serves exactly what was written. A
// store directory reopened after its process died (Open of an existing directory) may
// hold files whose name and size are right but whose bytes never reached the disk (a
// machine crash). So every file's CRC-32C is recorded in the entry's index when the entry
// is committed, and a file of an entry this store did not write is served only once its
// bytes match (Find verifies it on first use; on a mismatch it drops the entry and the
// restore downloads the file). Computing the sum costs one read of each file new to the
// store (the upload has just read it, so it comes from the page cache); a file other
// entries already hold takes their sum.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newSum() hash.Hash32 { return crc32.New(castagnoli) }

func formatSum(h hash.Hash32) string { return fmt.Sprintf("crc32c:%08x", h.Sum32()) }

// fileSum is the sum of the file at path and its size.
func fileSum(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := newSum()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", n, err
	}
	return formatSum(h), n, nil
}

// fileID is what identifies the bytes of a file: its handle name and size.
type fileID struct {
	handle string
	size   int64
}

// knownSum is the sum an entry recorded for a file, and whether the store checked it.
type knownSum struct {
	sum     string
	checked bool
}

// knownSums lists the sums the committed entries of (job, vertex) hold, a checked one
// preferred.
func (s *Store) knownSums(job, vertex string) map[fileID]knownSum {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[fileID]knownSum{}
	for k, e := range s.entries {
		if k.Job != job || k.Vertex != vertex {
			continue
		}
		for _, f := range e.Files {
			id := fileID{f.Handle, f.Size}
			if cur, ok := out[id]; !ok || (!cur.checked && f.checked) {
				out[id] = knownSum{f.sum, f.checked}
			}
		}
	}
	return out
}

// verify says whether file i of entry e matches its recorded sum, marking it checked if so;
// on a mismatch (or a file that cannot be read) it drops the entry.
func (s *Store) verify(e *Entry, i int) bool {
	f := e.Files[i] // the caller copied e.Files[i] under s.mu; Path and sum never change
	sum, n, err := fileSum(f.Path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[e.Key] != e {
		return false // replaced or dropped meanwhile
	}
	if err == nil && n == f.Size && sum == f.sum {
		e.Files[i].checked = true
		return true
	}
	if err == nil {
		err = fmt.Errorf("%d bytes with %s, the entry recorded %d bytes with %s", n, sum, f.Size, f.sum)
	}
	s.log.Warn("local state: a file does not match its checksum (not synced before a crash?); dropping its entry, the restore downloads it",
		"entry", e.Key.String(), "handle", f.Handle, "file", f.Path, "err", err)
	s.dropEntry(e.Key, e)
	return false
}
