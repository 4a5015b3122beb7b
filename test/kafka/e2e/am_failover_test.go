package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

// TestKafkaSinkAcrossAMFailover: KafkaCount (Kafka -> keyed count -> exactly-once Kafka
// sink) while the input keeps coming; the standalone AM SIGKILLs itself right after a
// checkpoint's _metadata is written and before any sink hears it completed
// (am.CrashPointEnv), so that checkpoint's transactions are flushed but neither committed
// nor aborted. A new AM starts after a pause:
//
//   - adopted: it adopts the running subtasks; every transaction open at the crash (the
//     pre-committed one and the one being written) is committed, once;
//   - restored (adoption off): the job restores from that checkpoint; its pre-committed
//     transactions are committed and the ones written after it aborted.
//
// Either way the read_committed output holds every key's counts 1..n exactly once.
func TestKafkaSinkAcrossAMFailover(t *testing.T) {
	e := kafkatest.Require(t)
	for _, tc := range []struct {
		name    string
		timeout string // jobmanager.failover.task-adoption.timeout
		adopted bool
	}{
		{"adopted", "60 s", true},
		{"restored", "0 s", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out := e.CreateTopic(t, 2), e.CreateTopic(t, 2)
			group := kafkatest.UniqueName(t)
			args := []string{"--brokers", e.Bootstrap, "--input", in, "--output", out, "--group", group,
				"--transactional-id-prefix", out, "--discovery-interval", "300ms", "--transaction-timeout", "2m"}
			// The input flows from before the job starts until well after the crash, so the
			// crashing checkpoint's transactions hold records.
			f := &feeder{e: e, topic: in, keys: 7, sent: map[string]int{}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			feedErr := make(chan error, 1)
			go func() { feedErr <- f.phase(ctx, 2, 20000, 1500) }()
			dyn := append(testkit.Reactive(t.TempDir(), "300 ms"), "jobmanager.failover.task-adoption.timeout="+tc.timeout)
			const crashAt = 12
			r := testkit.StartAMRestartCluster(t, tideBin, standalone.LocalOptions{JobName: examples.KafkaCountName, JobArgs: args,
				TaskManagers: 2, Dynamic: dyn, Env: []string{am.CrashPointEnv + "=checkpoint-completed:" + strconv.Itoa(crashAt)}})
			c := r.C
			id := testkit.WaitJobID(t, restOf(c))
			d := testkit.WaitRunningAt(t, restOf(c), id, 2)

			select {
			case <-c.AMDone():
			case <-time.After(3 * time.Minute):
				t.Fatalf("the AM did not reach its crash point (checkpoint %d completed) within 3 minutes (logs in %s)", crashAt, c.LogDir())
			}
			atCrash, err := transactionStates(e, out)
			if err != nil {
				t.Fatal(err)
			}
			pending, open := openAtCrash(atCrash, out)
			if len(pending) == 0 {
				t.Fatalf("no pre-committed transaction open right after the AM died between completing a checkpoint and telling the sinks: %v", atCrash)
			}
			t.Logf("the AM died with pre-committed transactions %v open; being written: %v", pending, open)
			crashEpochs, err := transactionEpochs(e, open)
			if err != nil {
				t.Fatal(err)
			}

			time.Sleep(4 * time.Second) // the job runs without an AM meanwhile
			r.Start(t, 2)
			after := testkit.WaitRunningAt(t, restOf(c), id, 2)
			if adopted := after.Attempt == d.Attempt && after.RestoreFrom == 0; adopted != tc.adopted {
				t.Fatalf("AM 2 runs attempt %d restored from checkpoint %d (first AM: attempt %d); want adopted=%v (logs in %s)",
					after.Attempt, after.RestoreFrom, d.Attempt, tc.adopted, c.LogDir())
			}
			recs, total := f.checkExactWhenFed(t, feedErr, out)
			t.Logf("%d input records, %d output records exactly once", total, len(recs))

			// Every transaction open at the crash ended once, the right way: the pre-committed
			// ones committed; the one being written committed with the adopted subtasks'
			// next checkpoint, or aborted by the restore (its records are written again). The
			// restored subtask numbers its transactions on from the checkpoint, so it reuses
			// that id once the restore has fenced it: then a higher producer epoch than at
			// the crash shows the old transaction can no longer commit (aborted by the
			// fence), and the exact output above that its records never became visible.
			testkit.WaitFor(t, "the transactions open at the crash ended", func() (bool, error) {
				states, err := transactionStates(e, out)
				if err != nil {
					return false, err
				}
				for _, txn := range pending {
					if states[txn] != "CompleteCommit" {
						return false, fmt.Errorf("pre-committed transaction %s is %s, want CompleteCommit", txn, states[txn])
					}
				}
				epochs, err := transactionEpochs(e, open)
				if err != nil {
					return false, err
				}
				for _, txn := range open {
					switch {
					case tc.adopted && states[txn] != "CompleteCommit":
						return false, fmt.Errorf("transaction %s (being written at the crash) is %s, want CompleteCommit", txn, states[txn])
					case !tc.adopted && states[txn] != "CompleteAbort" && epochs[txn] <= crashEpochs[txn]:
						return false, fmt.Errorf("transaction %s (being written at the crash) is %s at producer epoch %d as at the crash, want CompleteAbort or a restored producer's higher epoch",
							txn, states[txn], epochs[txn])
					}
				}
				return true, nil
			})
			again, err := e.ReadCommitted(t.Context(), out)
			if err != nil || len(again) != total {
				t.Fatalf("read_committed after the transactions ended: %d records (err %v), want %d", len(again), err, total)
			}
		})
	}
}

// openAtCrash reads the broker's transaction states (ids <prefix>-<subtask>-<n>, see
// stream/kafka) right after the AM died: pending are the Ongoing transactions below each
// subtask's newest id (flushed at a checkpoint, not yet committed), open the newest ids
// that are Ongoing (holding records written since the last checkpoint).
func openAtCrash(states map[string]string, prefix string) (pending, open []string) {
	newest := map[string]string{}
	for txn := range states {
		sub, _, _ := strings.Cut(strings.TrimPrefix(txn, prefix+"-"), "-")
		if cur, ok := newest[sub]; !ok || txnNumber(txn) > txnNumber(cur) {
			newest[sub] = txn
		}
	}
	for txn, st := range states {
		if st != "Ongoing" {
			continue
		}
		sub, _, _ := strings.Cut(strings.TrimPrefix(txn, prefix+"-"), "-")
		if newest[sub] == txn {
			open = append(open, txn)
		} else {
			pending = append(pending, txn)
		}
	}
	slices.Sort(pending)
	slices.Sort(open)
	return pending, open
}

func txnNumber(id string) int {
	n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
	return n
}

// withAdmin runs fn with an admin client of the broker and a 30 s deadline.
func withAdmin(e *kafkatest.Env, fn func(ctx context.Context, adm *kadm.Client) error) error {
	cl, err := e.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fn(ctx, kadm.NewClient(cl))
}

// transactionEpochs are the broker's current producer epochs of the transactional ids.
func transactionEpochs(e *kafkatest.Env, ids []string) (map[string]int16, error) {
	out := map[string]int16{}
	if len(ids) == 0 {
		return out, nil
	}
	err := withAdmin(e, func(ctx context.Context, adm *kadm.Client) error {
		described, err := adm.DescribeTransactions(ctx, ids...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			d, ok := described[id]
			if !ok || d.Err != nil {
				return fmt.Errorf("describe transaction %s: %v", id, d.Err)
			}
			out[id] = d.ProducerEpoch
		}
		return nil
	})
	return out, err
}

// transactionStates are the broker's states of the transactional ids with prefix.
func transactionStates(e *kafkatest.Env, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := withAdmin(e, func(ctx context.Context, adm *kadm.Client) error {
		list, err := adm.ListTransactions(ctx, nil, nil)
		for _, l := range list {
			if strings.HasPrefix(l.TxnID, prefix+"-") {
				out[l.TxnID] = l.State
			}
		}
		return err
	})
	return out, err
}
