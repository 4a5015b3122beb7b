package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tidestream/tide/stream"
)

// transactionalID names transaction n of a sink subtask. Subtask i of any attempt uses
// <prefix>-i-n, <prefix>-i-(n+1), ... one id per checkpoint, each initialized (registered
// with the broker) before its first record, so the ids a subtask used after a checkpoint
// form an unbroken run that a restore can find and abort.
func transactionalID(prefix string, subtask int, n int64) string {
	return prefix + "-" + strconv.Itoa(subtask) + "-" + strconv.FormatInt(n, 10)
}

// committable is a flushed ("pre-committed") transaction waiting for its checkpoint to
// complete: what it takes to commit it from any process.
type committable struct {
	TransactionalID string
	ProducerID      int64
	Epoch           int16
	Checkpoint      int64
	Subtask         int
}

func (c committable) item() stream.ListItem {
	b := stream.AppendString(nil, c.TransactionalID)
	b = stream.Int64Codec{}.Append(b, c.ProducerID)
	b = stream.Int64Codec{}.Append(b, int64(c.Epoch))
	b = stream.Int64Codec{}.Append(b, c.Checkpoint)
	b = stream.Int64Codec{}.Append(b, int64(c.Subtask))
	return stream.ListItem{ID: "txn-" + c.TransactionalID, Data: b}
}

func committableFromItem(it stream.ListItem) (committable, error) {
	d := stream.NewDecoder(it.Data)
	c := committable{TransactionalID: d.String(), ProducerID: d.Varint(), Epoch: int16(d.Varint()), Checkpoint: d.Varint(), Subtask: int(d.Varint())}
	if d.Err() != nil || d.Remaining() != 0 {
		return c, fmt.Errorf("decoding pending transaction %q: bad encoding", it.ID)
	}
	return c, nil
}

// subtaskMeta records, per subtask and checkpoint, the number of the transaction the
// subtask had open after the snapshot: restores probe from there.
type subtaskMeta struct {
	Subtask     int
	Next        int64
	Checkpoint  int64
	Parallelism int
}

func (m subtaskMeta) item() stream.ListItem {
	b := stream.Int64Codec{}.Append(nil, int64(m.Subtask))
	b = stream.Int64Codec{}.Append(b, m.Next)
	b = stream.Int64Codec{}.Append(b, m.Checkpoint)
	b = stream.Int64Codec{}.Append(b, int64(m.Parallelism))
	return stream.ListItem{ID: "meta-" + strconv.Itoa(m.Subtask), Data: b}
}

func metaFromItem(it stream.ListItem) (subtaskMeta, error) {
	d := stream.NewDecoder(it.Data)
	m := subtaskMeta{Subtask: int(d.Varint()), Next: d.Varint(), Checkpoint: d.Varint(), Parallelism: int(d.Varint())}
	if d.Err() != nil || d.Remaining() != 0 || m.Subtask < 0 || m.Next < 1 {
		return m, fmt.Errorf("decoding transaction counter %q: bad encoding", it.ID)
	}
	return m, nil
}

// retriableTxnError reports errors a transaction request should simply retry.
func retriableTxnError(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.NotCoordinator) || kerr.IsRetriable(err)
}

// retry runs fn until it succeeds, fails for good, or ctx ends.
func retry(ctx context.Context, fn func() error) error {
	backoff := 20 * time.Millisecond
	for {
		err := fn()
		if err == nil || !retriableTxnError(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// initProducerID runs InitProducerID for a transactional id (fencing its earlier producers
// and aborting its open transaction) and returns the new producer id and epoch.
func initProducerID(ctx context.Context, cl *kgo.Client, id string, timeout time.Duration) (int64, int16, error) {
	var pid int64
	var epoch int16
	err := retry(ctx, func() error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = kmsg.StringPtr(id)
		req.TransactionTimeoutMillis = int32(timeout.Milliseconds())
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return err
		}
		pid, epoch = resp.ProducerID, resp.ProducerEpoch
		return nil
	})
	return pid, epoch, err
}

// commitTransaction commits a flushed transaction by its producer id and epoch, from any
// client (Flink's committer does the same after a restore). Committing a committed
// transaction again succeeds.
func commitTransaction(ctx context.Context, cl *kgo.Client, c committable) error {
	return retry(ctx, func() error {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID = c.TransactionalID
		req.ProducerID = c.ProducerID
		req.ProducerEpoch = c.Epoch
		req.Commit = true
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	})
}

// lostCommit reports commit errors that mean the transaction is gone (the broker aborted it
// after its timeout, or another producer with the same id fenced it): its records are lost.
func lostCommit(err error) bool {
	return errors.Is(err, kerr.InvalidTxnState) || errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.UnknownProducerID) ||
		errors.Is(err, kerr.InvalidProducerIDMapping)
}

// authError explains an authorization failure of a transactional id.
func authError(prefix, id string, err error) error {
	if errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		return fmt.Errorf("transactional id %q is not authorized: grant the sink's principal WRITE and DESCRIBE on transactional ids with the prefix %q: %w", id, prefix, err)
	}
	if errors.Is(err, kerr.InvalidTransactionTimeout) {
		return fmt.Errorf("transactional id %q: the broker refuses the transaction timeout (above its transaction.max.timeout.ms?): %w", id, err)
	}
	return fmt.Errorf("transactional id %q: %w", id, err)
}

// abortLingering aborts the transactions that earlier attempts of the subtasks this subtask
// now stands for may have left open after the restored checkpoint: for old subtask ids j =
// subtask, subtask+p, subtask+2p, ... it initializes <prefix>-j-n from the first number
// not covered by the checkpoint until it finds one never used (epoch 0). Ids of subtasks
// beyond the restored parallelism are probed until one was never used at all.
func abortLingering(ctx context.Context, cl *kgo.Client, prefix string, subtask, parallelism int, next func(j int) (int64, bool), timeout time.Duration) (aborted int, err error) {
	for j := subtask; ; j += parallelism {
		first, known := next(j)
		usedAny := false
		for n := first; ; n++ {
			id := transactionalID(prefix, j, n)
			_, epoch, err := initProducerID(ctx, cl, id, timeout)
			if err != nil {
				return aborted, authError(prefix, id, err)
			}
			if epoch == 0 {
				break // never used before this probe: neither are the later numbers
			}
			usedAny = true
			aborted++
		}
		if !known && !usedAny {
			return aborted, nil
		}
	}
}
