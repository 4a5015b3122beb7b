package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tidestream/tide/stream"
)

// FraudDetectionName is the name the job is registered under (--job-classname).
const FraudDetectionName = "FraudDetection"

// The detector's rule (after Flink's fraud detection walkthrough): an account that makes a
// small transaction and then, as its very next one, a large transaction raises an alert.
const (
	SmallCents = 1_000  // below $10.00
	LargeCents = 90_000 // above $900.00
)

// Transaction is one card payment.
type Transaction struct {
	Account string
	Seq     int64 // position in the account's partition
	Cents   int64
}

// TransactionCodec is a hand-written codec: records cross the network between the source
// and the keyed detector, and a codec is much faster than the gob default.
type TransactionCodec struct{}

func (TransactionCodec) Append(dst []byte, t Transaction) []byte {
	dst = stream.AppendString(dst, t.Account)
	dst = stream.Int64Codec{}.Append(dst, t.Seq)
	return stream.Int64Codec{}.Append(dst, t.Cents)
}

func (TransactionCodec) Decode(src []byte) (Transaction, error) {
	d := stream.NewDecoder(src)
	t := Transaction{Account: d.String(), Seq: d.Varint(), Cents: d.Varint()}
	if d.Err() != nil {
		return t, fmt.Errorf("decoding Transaction: %w", d.Err())
	}
	return t, nil
}

// Generate is the deterministic transaction feed: partition p carries the accounts
// p*accounts .. p*accounts+accounts-1 in turn, and the amounts are a hash of (p, seq), so a
// test can compute the exact alerts in advance.
func Generate(partition int, seq int64, accounts int) Transaction {
	return Transaction{
		Account: fmt.Sprintf("acct-%d", int64(partition*accounts)+seq%int64(accounts)),
		Seq:     seq,
		Cents:   int64(mix(uint64(partition)<<40|uint64(seq)) % 100_000),
	}
}

// mix is SplitMix64's finalizer: a fixed, well-spread hash.
func mix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// detector is the keyed state of one account: whether its last transaction was small.
type detector struct {
	LastWasSmall bool
}

// Alert formats an alert as the sink writes it.
func Alert(t Transaction) string {
	return fmt.Sprintf("ALERT %s seq=%d amount=%d.%02d", t.Account, t.Seq, t.Cents/100, t.Cents%100)
}

// BuildFraudDetection builds the job from its arguments:
//
//	--partitions P     source partitions (splits; default 4)
//	--accounts A       accounts per partition (default 5)
//	--transactions N   transactions per partition (0: unbounded)
//	--rate R           transactions per second per source subtask (0: unlimited)
//	--output DIR       exactly-once file sink (default: print to the TaskManager's stdout)
//	--parallelism P    the job's parallelism outside reactive mode (default 1)
func BuildFraudDetection(args []string) (*stream.Job, error) {
	fs := flag.NewFlagSet(FraudDetectionName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	partitions := fs.Int("partitions", 4, "source partitions")
	accounts := fs.Int("accounts", 5, "accounts per partition")
	n := fs.Int64("transactions", 0, "transactions per partition (0: unbounded)")
	rate := fs.Float64("rate", 0, "transactions per second per source subtask (0: unlimited)")
	output := fs.String("output", "", "output directory (default: print)")
	parallelism := fs.Int("parallelism", 1, "parallelism")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("job %s: %w", FraudDetectionName, err)
	}
	if *partitions < 1 || *accounts < 1 || *n < 0 || *rate < 0 || *parallelism < 1 {
		return nil, fmt.Errorf("job %s: --partitions, --accounts and --parallelism must be at least 1, --transactions and --rate not negative", FraudDetectionName)
	}
	accts := *accounts

	job := stream.NewJob(FraudDetectionName, *parallelism, 0)
	txns := stream.GeneratorSource(job, "transactions", stream.Generator[Transaction]{
		Partitions: *partitions, PerPartition: *n, Rate: *rate,
		Next: func(p int, seq int64, _ []byte) (Transaction, int64, []byte) {
			return Generate(p, seq, accts), seq, nil
		},
	}, stream.NoWatermarks[Transaction]()).WithCodec(TransactionCodec{})

	alerts := stream.KeyedProcess(stream.KeyBy(txns, func(t Transaction) string { return t.Account }), "fraud-detector",
		stream.KeyedFuncs[Transaction, string, detector, string]{
			OnRecord: func(_ string, st *detector, t Transaction, ts int64, emit func(string, int64)) bool {
				if st.LastWasSmall && t.Cents > LargeCents {
					emit(Alert(t), ts)
				}
				st.LastWasSmall = t.Cents < SmallCents
				return true
			},
		})

	if *output != "" {
		stream.FileSink(alerts, "alerts", *output, func(s string) string { return s })
	} else {
		stream.Print(alerts, "alerts", nil)
	}
	return job, nil
}
