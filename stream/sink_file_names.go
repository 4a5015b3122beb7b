package stream

import (
	"fmt"
	"strconv"
	"strings"
)

// Names of the file sink's files. Every file of one subtask's part shares a base
// <operator>-[<run id>.]<attempt>-<subtask>-<seq>; the run id names the AM process (attempt
// numbers restart in a recovered AM), so a base is unique over the whole life of the job.
//
//	.<base>.inprogress   being written (hidden)
//	.<base>.pending      closed and synced at a checkpoint, waiting for it to complete (hidden)
//	part-<base>          committed: visible to readers
const (
	inProgressSuffix = ".inprogress"
	pendingSuffix    = ".pending"
	partPrefix       = "part-"
)

// partBase is the base name of part seq of the subtask rt describes.
func partBase(rt Runtime, seq int) string {
	return fmt.Sprintf("%s-%s-%d-%d", rt.OperatorID, attemptToken(rt.RunID, rt.Attempt), rt.Subtask, seq)
}

// attemptToken is [<run id>.]<attempt>.
func attemptToken(runID string, attempt int64) string {
	a := strconv.FormatInt(attempt, 10)
	if runID == "" {
		return a
	}
	return runID + "." + a
}

// hiddenPart parses the name of a hidden (in-progress or pending) file of operator op:
// .<op>-[<run id>.]<attempt>-<subtask>-<seq><suffix>. ok is false for any other name.
func hiddenPart(name, op string) (runID string, attempt int64, ok bool) {
	rest, found := strings.CutPrefix(name, "."+op+"-")
	if !found {
		return "", 0, false
	}
	if r, f := strings.CutSuffix(rest, inProgressSuffix); f {
		rest = r
	} else if r, f := strings.CutSuffix(rest, pendingSuffix); f {
		rest = r
	} else {
		return "", 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 {
		return "", 0, false
	}
	for _, p := range parts[1:] {
		if _, err := strconv.Atoi(p); err != nil {
			return "", 0, false
		}
	}
	tok := parts[0]
	if i := strings.LastIndexByte(tok, '.'); i >= 0 {
		runID, tok = tok[:i], tok[i+1:]
		if runID == "" {
			return "", 0, false
		}
	}
	attempt, err := strconv.ParseInt(tok, 10, 64)
	if err != nil || attempt < 0 {
		return "", 0, false
	}
	return runID, attempt, true
}

// olderAttempt says whether a file written by (runID, attempt) belongs to an attempt before
// the one rt describes: an attempt of another AM process (this one is the only one alive),
// or an earlier attempt of this one.
func olderAttempt(runID string, attempt int64, rt Runtime) bool {
	if runID != rt.RunID {
		return true
	}
	return attempt < rt.Attempt
}
