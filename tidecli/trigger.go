package tidecli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tidestream/tide/api"
)

// trigger starts an operation (a checkpoint, savepoint or stop) with start, then polls it
// by its trigger id until it completes, printing progress. what names it in messages and
// where names the polling path for the user.
func (cc *clientCommand) trigger(ctx context.Context, what, where string, wait time.Duration,
	start func(ctx context.Context) (string, error),
	poll func(ctx context.Context, triggerID string) (api.AsyncOperation, error)) (api.AsyncOperation, error) {
	id, err := start(ctx)
	if err != nil {
		return api.AsyncOperation{}, err
	}
	if id == "" {
		return api.AsyncOperation{}, fmt.Errorf("POST %s: the AM answered without a request-id", where)
	}
	cc.progress("%s triggered (trigger id %s); waiting for it to complete...", what, id)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	begin := time.Now()
	lastReport := begin
	notDone := func() error {
		return fmt.Errorf("%s (trigger id %s) not complete after %s: see GET %s/%s", what, id, wait, where, id)
	}
	for {
		op, err := poll(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return api.AsyncOperation{}, notDone()
			}
			return api.AsyncOperation{}, err
		}
		if op.Done() {
			if f := op.Failure(); f != "" {
				return op, fmt.Errorf("%s (trigger id %s) failed: %s", what, id, f)
			}
			return op, nil
		}
		if time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			cc.progress("  still %s after %s", strings.ToLower(strings.ReplaceAll(op.Status.ID, "_", " ")), time.Since(begin).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return api.AsyncOperation{}, notDone()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// result is the finished operation's result (empty if the AM sent none).
func result(op api.AsyncOperation) api.OperationResult {
	if op.Operation == nil {
		return api.OperationResult{}
	}
	return *op.Operation
}
