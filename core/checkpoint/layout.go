package checkpoint

import (
	"slices"
	"strconv"
	"strings"
)

// MetadataFile is the file written last into a checkpoint directory; a checkpoint
// counts only once it exists.
const MetadataFile = "_metadata"

const chkPrefix = "chk-"

// ChkName is the directory name of checkpoint n: "chk-<n>".
func ChkName(n int64) string { return chkPrefix + strconv.FormatInt(n, 10) }

// ChkDir is the directory of checkpoint n of a job, relative to state.checkpoints.dir.
func ChkDir(jobID string, n int64) string { return jobID + "/" + ChkName(n) }

// MetadataPath is the _metadata file of checkpoint n of a job.
func MetadataPath(jobID string, n int64) string { return ChkDir(jobID, n) + "/" + MetadataFile }

// ParseChkName returns n for a directory named "chk-<n>" with n ≥ 1 in canonical
// decimal form (no sign, no leading zeros).
func ParseChkName(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, chkPrefix)
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// DirEntry is one child of a job's checkpoint directory and, for directories, the
// names of the files directly inside it.
type DirEntry struct {
	Name  string
	IsDir bool
	Files []string
}

// Selection is what a job's checkpoint directory holds.
type Selection struct {
	// Latest is the newest complete checkpoint; 0 when there is none.
	Latest int64
	// Complete lists every complete checkpoint, ascending.
	Complete []int64
	// Incomplete lists chk-<n> directories without _metadata, ascending: leftovers of a
	// checkpoint that never finished, to delete.
	Incomplete []int64
	// Highest is the highest n of any chk-<n> directory; new ids must be above it.
	Highest int64
	// Ignored are entries that are not chk-<n> directories (left alone).
	Ignored []string
}

// Select classifies the listing of <dir>/<job-id>/.
func Select(entries []DirEntry) Selection {
	var s Selection
	for _, e := range entries {
		n, ok := ParseChkName(e.Name)
		if !ok || !e.IsDir {
			s.Ignored = append(s.Ignored, e.Name)
			continue
		}
		s.Highest = max(s.Highest, n)
		if slices.Contains(e.Files, MetadataFile) {
			s.Complete = append(s.Complete, n)
		} else {
			s.Incomplete = append(s.Incomplete, n)
		}
	}
	slices.Sort(s.Complete)
	s.Complete = slices.Compact(s.Complete)
	slices.Sort(s.Incomplete)
	s.Incomplete = slices.Compact(s.Incomplete)
	slices.Sort(s.Ignored)
	if len(s.Complete) > 0 {
		s.Latest = s.Complete[len(s.Complete)-1]
	}
	return s
}
