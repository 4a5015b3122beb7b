package netplane

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// BenchmarkThroughput streams 100-byte records through one channel, over
// loopback TCP and in process, and compares each with a raw TCP io.Copy of
// the same number of payload bytes measured in the same run.
//
//	go test -run XXX -bench Throughput -benchtime 2000000x ./tm/netplane/
func BenchmarkThroughput(b *testing.B) {
	const recordBytes = 100
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			opts := Options{Logger: testLogger()}
			var prod, cons *Plane
			var err error
			if prod, err = Listen(ctx, "127.0.0.1:0", opts); err != nil {
				b.Fatal(err)
			}
			defer prod.Close()
			cons = prod
			if mode == "tcp" {
				if cons, err = Listen(ctx, "127.0.0.1:0", opts); err != nil {
					b.Fatal(err)
				}
				defer cons.Close()
			}
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				b.Fatal(err)
			}
			rec := make([]byte, recordBytes)
			done := make(chan error, 1)
			b.SetBytes(recordBytes)
			b.ResetTimer()
			start := time.Now()
			go func() {
				for {
					if _, err := in.Next(ctx); err != nil {
						if errors.Is(err, io.EOF) {
							err = nil
						}
						done <- err
						return
					}
				}
			}()
			for range b.N {
				if err := out.Write(ctx, rec); err != nil {
					b.Fatal(err)
				}
			}
			if err := out.Close(ctx); err != nil {
				b.Fatal(err)
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			payload := int64(b.N) * recordBytes
			raw := rawTCPCopy(b, payload)
			mbps := float64(payload) / elapsed.Seconds() / 1e6
			rawMBps := float64(payload) / raw.Seconds() / 1e6
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(rawMBps, "raw-tcp-MB/s")
			b.ReportMetric(mbps/rawMBps, "x-raw-tcp")
		})
	}
}

// rawTCPCopy times an io.Copy of n bytes over a fresh loopback connection,
// until the receiver has read them all.
func rawTCPCopy(b *testing.B, n int64) time.Duration {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	received := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			received <- err
			return
		}
		defer c.Close()
		got, err := io.Copy(io.Discard, c)
		if err == nil && got != n {
			err = io.ErrUnexpectedEOF
		}
		received <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := io.Copy(c, io.LimitReader(zeros{}, n)); err != nil {
		b.Fatal(err)
	}
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	if err := <-received; err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
