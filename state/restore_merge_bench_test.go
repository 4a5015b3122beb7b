package state

import (
	"context"
	"crypto/rand"
	"log/slog"
	"path/filepath"
	"testing"
)

// BenchmarkRestoreMerge times a restore that merges a second writer's key groups in (a
// rescale's subtask whose range spans two old ones): writer a holds key groups 0-7,
// writer b 8-15, 32 MiB each of incompressible values; the restore keeps 0-15, so b's
// 32 MiB are merged into a's instance.
func BenchmarkRestoreMerge(b *testing.B) {
	root := b.TempDir()
	const perWriter, valueSize = 32 << 20, 64 << 10
	fill := func(name string, from int) (string, []DBFile) {
		be, err := openPebbleIn(filepath.Join(root, name), PebbleOptions{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		v := make([]byte, valueSize)
		for i := range perWriter / valueSize {
			_, _ = rand.Read(v)
			if err := be.Put(from+i%8, "op/s", []byte{byte(i >> 8), byte(i)}, v); err != nil {
				b.Fatal(err)
			}
		}
		dir := filepath.Join(root, "ck-"+name)
		files, err := be.Checkpoint(dir)
		if err != nil {
			b.Fatal(err)
		}
		return dir, files
	}
	da, fa := fill("a", 0)
	db, fb := fill("b", 8)
	sa, _ := source(da, fa, 0, 15)
	sb, _ := source(db, fb, 0, 15)
	opts := PebbleOptions{Dir: filepath.Join(root, "restore"), Name: "r", Logger: slog.New(slog.DiscardHandler)}
	b.SetBytes(perWriter)
	b.ResetTimer()
	for range b.N {
		be, err := OpenPebbleFromCheckpoints(context.Background(), opts, 0, 15, sa, []RestoreSource{sb})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		n := 0
		if err := be.Iterate("op/s", 8, 15, func(int, []byte, []byte) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != perWriter/valueSize {
			b.Fatalf("restored %d entries of writer b, want %d", n, perWriter/valueSize)
		}
		_ = be.Close()
		b.StartTimer()
	}
}
