package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tidestream/tide/stream"
)

// List state of the exactly-once writer (Union: every subtask sees every item, and acts on
// the items of the old subtasks j with j mod parallelism == its index).
const (
	txnState  = "kafka-transactions"
	metaState = "kafka-transaction-counters"
)

// restoreTimeout bounds what Open does against the broker: re-committing restored
// transactions and aborting leftovers.
const restoreTimeout = 2 * time.Minute

// writer is the sink operator of one subtask.
type writer[T any] struct {
	stream.BaseOperator
	name string
	cfg  *Sink[T]
	rt   stream.Runtime
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	// base writes the records of None and AtLeastOnce, and sends the transaction requests
	// of ExactlyOnce (commits, probes).
	base *kgo.Client

	// ExactlyOnce: the open transaction and the flushed ones waiting for their checkpoint.
	txn        *kgo.Client
	txnN       int64
	txnID      string
	txnRecords int
	pending    []committable

	// timeout is the job's execution.buffer-timeout the clients that write records linger by
	// (lingerFor); SetBufferTimeout changes it.
	timeout time.Duration

	errMu    sync.Mutex
	asyncErr error
}

func newWriter[T any](name string, cfg *Sink[T]) *writer[T] { return &writer[T]{name: name, cfg: cfg} }

func (w *writer[T]) clientOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(w.cfg.Brokers...), kgo.DefaultProduceTopic(w.cfg.Topic), lingerOpt(w.timeout)}
	opts = append(opts, extra...)
	return append(opts, w.cfg.ClientOptions...)
}

func (w *writer[T]) errorf(format string, args ...any) error {
	return fmt.Errorf("kafka sink %q (subtask %d, %s): %w", w.name, w.rt.Subtask, w.cfg.Guarantee, fmt.Errorf(format, args...))
}

func (w *writer[T]) Open(ctx context.Context, rt stream.Runtime, restored stream.StateReader) error {
	w.rt = rt
	w.timeout = rt.BufferTimeout
	w.log = slog.Default().With("sink", w.name, "subtask", rt.Subtask, "guarantee", w.cfg.Guarantee.String())
	w.ctx, w.cancel = context.WithCancel(context.Background())
	base, err := w.newBase()
	if err != nil {
		return err
	}
	w.base = base
	if w.cfg.Guarantee != ExactlyOnce {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	next, err := w.restore(rctx, restored)
	if err != nil {
		return err
	}
	return w.beginTransaction(rctx, next)
}

// newBase makes the client that writes the records of None and AtLeastOnce and sends the
// transaction requests of ExactlyOnce.
func (w *writer[T]) newBase() (*kgo.Client, error) {
	var extra []kgo.Opt
	if w.cfg.Guarantee == None {
		extra = append(extra, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(w.clientOpts(extra...)...)
	if err != nil {
		return nil, w.errorf("%w", err)
	}
	return cl, nil
}

// SetBufferTimeout follows a reloaded execution.buffer-timeout. A client's linger is fixed
// when it is made, so None and AtLeastOnce deliver what the current client holds (in order:
// the records of one key stay in order on their partition) and go on with a new client;
// ExactlyOnce makes its next transaction's client, at the next checkpoint, with the new
// linger.
func (w *writer[T]) SetBufferTimeout(d time.Duration) error {
	old := w.timeout
	w.timeout = d
	if lingerFor(d) == lingerFor(old) || w.cfg.Guarantee == ExactlyOnce || w.base == nil {
		return nil
	}
	if err := w.flush(w.base); err != nil {
		return err
	}
	base, err := w.newBase()
	if err != nil {
		return err
	}
	w.base.Close()
	w.base = base
	return nil
}

// restore commits the restored pending transactions this subtask is responsible for, aborts
// what earlier attempts left open, and returns the number of this subtask's first
// transaction.
func (w *writer[T]) restore(ctx context.Context, restored stream.StateReader) (int64, error) {
	metas := map[int]subtaskMeta{}
	var maxNext int64 = 1
	var commits []committable
	if restored != nil {
		for _, it := range restored.List(metaState) {
			m, err := metaFromItem(it)
			if err != nil {
				return 0, w.errorf("%w", err)
			}
			metas[m.Subtask] = m
			maxNext = max(maxNext, m.Next)
		}
		for _, it := range restored.List(txnState) {
			c, err := committableFromItem(it)
			if err != nil {
				return 0, w.errorf("%w", err)
			}
			if c.Subtask%w.rt.Parallelism == w.rt.Subtask {
				commits = append(commits, c)
			}
		}
	}
	for _, c := range commits {
		if err := w.commit(ctx, c); err != nil {
			return 0, err
		}
	}
	next := func(j int) (int64, bool) {
		if m, ok := metas[j]; ok {
			return m.Next, true
		}
		return maxNext, false
	}
	aborted, err := abortLingering(ctx, w.base, w.cfg.TransactionalIDPrefix, w.rt.Subtask, w.rt.Parallelism, next, w.cfg.TransactionTimeout)
	if err != nil {
		return 0, w.errorf("aborting transactions left by earlier attempts: %w", err)
	}
	if len(commits) > 0 || aborted > 0 {
		w.log.Info("Kafka sink restored", "committed", len(commits), "probed_used_ids", aborted)
	}
	n, _ := next(w.rt.Subtask)
	return n, nil
}

// beginTransaction opens transaction n on a new transactional producer. Initializing the
// producer id first registers the id with the broker, which the probing on restore relies on.
func (w *writer[T]) beginTransaction(ctx context.Context, n int64) error {
	id := transactionalID(w.cfg.TransactionalIDPrefix, w.rt.Subtask, n)
	cl, err := kgo.NewClient(w.clientOpts(kgo.TransactionalID(id), kgo.TransactionTimeout(w.cfg.TransactionTimeout))...)
	if err != nil {
		return w.errorf("%w", err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return w.errorf("%w", authError(w.cfg.TransactionalIDPrefix, id, err))
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return w.errorf("beginning transaction %q: %w", id, err)
	}
	w.txn, w.txnN, w.txnID, w.txnRecords = cl, n, id, 0
	return nil
}

func (w *writer[T]) promise(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	w.errMu.Lock()
	if w.asyncErr == nil {
		w.asyncErr = err
	}
	w.errMu.Unlock()
}

func (w *writer[T]) firstErr() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.asyncErr
}

func (w *writer[T]) Process(v any, ts int64, _ stream.Collector) error {
	if err := w.firstErr(); err != nil {
		return w.errorf("writing to topic %q: %w", w.cfg.Topic, err)
	}
	key, value, err := w.cfg.Serialize(v.(T))
	if err != nil {
		return w.errorf("serializing a record: %w", err)
	}
	rec := &kgo.Record{Key: key, Value: value}
	if ts != stream.NoTimestamp {
		rec.Timestamp = time.UnixMilli(ts)
	}
	if w.txn != nil {
		w.txnRecords++
		w.txn.Produce(w.ctx, rec, w.promise)
		return nil
	}
	w.base.Produce(w.ctx, rec, w.promise)
	return nil
}

// flush waits until every record written so far is acknowledged.
func (w *writer[T]) flush(cl *kgo.Client) error {
	if err := cl.Flush(w.ctx); err != nil {
		return w.errorf("flushing: %w", err)
	}
	if err := w.firstErr(); err != nil {
		return w.errorf("writing to topic %q: %w", w.cfg.Topic, err)
	}
	return nil
}

// Snapshot is the barrier: AtLeastOnce flushes; ExactlyOnce flushes the open transaction
// (phase one), keeps it as pending for this checkpoint and opens the next one.
func (w *writer[T]) Snapshot(checkpointID int64, sw stream.StateWriter) error {
	switch w.cfg.Guarantee {
	case AtLeastOnce:
		return w.flush(w.base)
	case ExactlyOnce:
	default:
		return nil
	}
	if w.txnRecords > 0 {
		if err := w.flush(w.txn); err != nil {
			return err
		}
		pid, epoch, err := w.txn.ProducerID(w.ctx)
		if err != nil {
			return w.errorf("transaction %q: %w", w.txnID, err)
		}
		w.pending = append(w.pending, committable{TransactionalID: w.txnID, ProducerID: pid, Epoch: epoch, Checkpoint: checkpointID, Subtask: w.rt.Subtask})
		// Closing the client leaves the flushed transaction open on the broker.
		w.txn.Close()
		w.txn = nil
		ctx, cancel := context.WithTimeout(w.ctx, restoreTimeout)
		err = w.beginTransaction(ctx, w.txnN+1)
		cancel()
		if err != nil {
			return err
		}
	}
	sw.List(metaState, stream.Union, subtaskMeta{Subtask: w.rt.Subtask, Next: w.txnN, Checkpoint: checkpointID, Parallelism: w.rt.Parallelism}.item())
	for _, c := range w.pending {
		sw.List(txnState, stream.Union, c.item())
	}
	return nil
}

// CheckpointComplete commits every pending transaction of this or an earlier checkpoint.
func (w *writer[T]) CheckpointComplete(ctx context.Context, checkpointID int64) error {
	kept := w.pending[:0]
	for _, c := range w.pending {
		if c.Checkpoint > checkpointID {
			kept = append(kept, c)
			continue
		}
		if err := w.commit(ctx, c); err != nil {
			return err
		}
	}
	w.pending = kept
	return nil
}

// commit commits one pending transaction. A transaction the broker no longer has (timed
// out, or fenced by a producer with the same id) is logged as lost, as Flink does: failing
// would only restore the same checkpoint and fail again.
func (w *writer[T]) commit(ctx context.Context, c committable) error {
	cctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	err := commitTransaction(cctx, w.base, c)
	switch {
	case err == nil:
		return nil
	case lostCommit(err):
		w.log.Error("Kafka transaction could not be committed: its records are lost (it outlived the transaction timeout, or another sink uses the same transactional id prefix)",
			"transactional_id", c.TransactionalID, "checkpoint", c.Checkpoint, "timeout", w.cfg.TransactionTimeout, "err", err)
		return nil
	default:
		return w.errorf("committing transaction %q of checkpoint %d: %w", c.TransactionalID, c.Checkpoint, err)
	}
}

// EndInput without checkpoints delivers what is buffered (and commits, for ExactlyOnce,
// which a submission check normally keeps from running without checkpoints).
func (w *writer[T]) EndInput(ctx context.Context, _ stream.Collector) error {
	if w.rt.CheckpointingEnabled {
		return nil
	}
	if w.txn == nil {
		return w.flush(w.base)
	}
	if err := w.flush(w.txn); err != nil {
		return err
	}
	if err := w.txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return w.errorf("committing transaction %q at end of input: %w", w.txnID, err)
	}
	w.txnRecords = 0
	return nil
}

// Close aborts the open transaction (never a pending one: its checkpoint may still
// complete, or a restore commits it) and closes the clients.
func (w *writer[T]) Close() error {
	var errs []error
	if w.txn != nil {
		if w.txnRecords > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := w.txn.AbortBufferedRecords(ctx); err != nil {
				errs = append(errs, err)
			} else if err := w.txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		w.txn.Close()
		w.txn = nil
	}
	if w.cancel != nil {
		w.cancel()
	}
	if w.base != nil {
		w.base.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return w.errorf("aborting transaction %q on close: %w", w.txnID, err)
	}
	return nil
}
