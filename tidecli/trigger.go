package tidecli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// triggerStatus is Flink's asynchronous-operation answer:
// {"status": {"id": "IN_PROGRESS" | "COMPLETED"}, "operation": {...}}.
type triggerStatus struct {
	Status struct {
		ID string `json:"id"`
	} `json:"status"`
	Operation json.RawMessage `json:"operation"`
}

// operationResult is the operation of a completed checkpoint, savepoint or stop.
type operationResult struct {
	CheckpointID int64           `json:"checkpointId"`
	Location     string          `json:"location"`
	FailureCause json.RawMessage `json:"failure-cause"`
}

// failure returns the failure cause's message, "" on success.
func (o operationResult) failure() string {
	if len(o.FailureCause) == 0 || string(o.FailureCause) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(o.FailureCause, &s) == nil {
		return s
	}
	var cause struct {
		Class      string `json:"class"`
		Message    string `json:"message"`
		StackTrace string `json:"stack-trace"`
	}
	if json.Unmarshal(o.FailureCause, &cause) == nil {
		for _, m := range []string{cause.Message, firstLine(cause.StackTrace), cause.Class} {
			if m != "" {
				return m
			}
		}
	}
	return string(o.FailureCause)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// trigger POSTs body to path, expecting {"request-id": ...}, then polls path/<id> until the
// operation completes, printing progress. It returns the operation and its raw JSON.
func (cc *clientCommand) trigger(ctx context.Context, what, path string, body any, wait time.Duration) (operationResult, json.RawMessage, error) {
	var started struct {
		RequestID string `json:"request-id"`
	}
	if err := cc.api.do(ctx, "POST", path, body, &started); err != nil {
		return operationResult{}, nil, err
	}
	if started.RequestID == "" {
		return operationResult{}, nil, fmt.Errorf("POST %s: the AM answered without a request-id", path)
	}
	cc.progress("%s triggered (trigger id %s); waiting for it to complete...", what, started.RequestID)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	begin := time.Now()
	lastReport := begin
	for {
		var st triggerStatus
		if err := cc.api.do(ctx, "GET", path+"/"+started.RequestID, nil, &st); err != nil {
			if ctx.Err() != nil {
				return operationResult{}, nil, fmt.Errorf("%s (trigger id %s) not complete after %s: see GET %s/%s", what, started.RequestID, wait, path, started.RequestID)
			}
			return operationResult{}, nil, err
		}
		// Flink reports a failure as COMPLETED with a failure-cause; tide says FAILED.
		if st.Status.ID != "IN_PROGRESS" && st.Status.ID != "" {
			var op operationResult
			if len(st.Operation) > 0 {
				if err := json.Unmarshal(st.Operation, &op); err != nil {
					return op, st.Operation, fmt.Errorf("%s (trigger id %s): unexpected operation %s: %w", what, started.RequestID, st.Operation, err)
				}
			}
			f := op.failure()
			if f == "" && st.Status.ID != "COMPLETED" {
				f = "status " + st.Status.ID
			}
			if f != "" {
				return op, st.Operation, fmt.Errorf("%s (trigger id %s) failed: %s", what, started.RequestID, f)
			}
			return op, st.Operation, nil
		}
		if time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			cc.progress("  still %s after %s", strings.ToLower(strings.ReplaceAll(st.Status.ID, "_", " ")), time.Since(begin).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return operationResult{}, nil, fmt.Errorf("%s (trigger id %s) not complete after %s: see GET %s/%s", what, started.RequestID, wait, path, started.RequestID)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
