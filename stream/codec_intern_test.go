package stream

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestInternString: every string comes back as its bytes; a short one decoded again while
// it is in its slots shares the first one's bytes, a long one never does; and a caller
// that changes its buffer afterwards does not change a string it was given.
func TestInternString(t *testing.T) {
	for _, s := range []string{"", "a", "w042", "seven77", "eight888", strings.Repeat("x", 20),
		strings.Repeat("y", internMaxLen), strings.Repeat("z", internMaxLen+1), "héllo wörld"} {
		t.Run(fmt.Sprintf("%d bytes", len(s)), func(t *testing.T) {
			b := []byte(s)
			first := internString(b)
			second := internString(b)
			if first != s || second != s {
				t.Fatalf("got %q and %q, want %q", first, second, s)
			}
			shared := len(s) > 0 && unsafe.StringData(first) == unsafe.StringData(second)
			if want := len(s) > 0 && len(s) <= internMaxLen; shared != want {
				t.Fatalf("second decode shares the first's bytes: %v, want %v", shared, want)
			}
			for i := range b {
				b[i] = '!'
			}
			if first != s || second != s {
				t.Fatalf("after the buffer changed: %q and %q, want %q", first, second, s)
			}
		})
	}
}

// TestInternStringSlotPair: two strings of one slot pair both stay in the table, and a
// third of the pair is still returned right (it pushes one out).
func TestInternStringSlotPair(t *testing.T) {
	bySlot := map[uint64][]string{}
	var same []string // three strings of one slot pair
	for i := 0; same == nil; i++ {
		s := fmt.Sprintf("k%d", i)
		pair := internHash([]byte(s)) &^ 1
		bySlot[pair] = append(bySlot[pair], s)
		if len(bySlot[pair]) == 3 {
			same = bySlot[pair]
		}
	}
	tab := new(internTable)
	a, b, c := []byte(same[0]), []byte(same[1]), []byte(same[2])
	sa, sb := tab.get(a), tab.get(b)
	if sa2, sb2 := tab.get(a), tab.get(b); sa2 != same[0] || sb2 != same[1] ||
		unsafe.StringData(sa2) != unsafe.StringData(sa) || unsafe.StringData(sb2) != unsafe.StringData(sb) {
		t.Fatalf("two strings of one pair: got %q %q, want %q %q, both from the table", sa2, sb2, same[0], same[1])
	}
	if sc := tab.get(c); sc != same[2] {
		t.Fatalf("third string of the pair: got %q, want %q", sc, same[2])
	}
	for _, s := range same {
		if got := tab.get([]byte(s)); got != s {
			t.Fatalf("got %q, want %q", got, s)
		}
	}
}

// TestInternStringConcurrent: goroutines decoding overlapping sets of strings each get
// their own string back (run with -race: the slots are read and replaced atomically).
func TestInternStringConcurrent(t *testing.T) {
	words := make([]string, 3*internSlots) // more than the table holds: slots are replaced
	for i := range words {
		words[i] = fmt.Sprintf("w%d-%s", i, strings.Repeat("p", i%24))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 20000 {
				w := words[(i*(g+1)*7919)%len(words)]
				if got := internString([]byte(w)); got != w {
					errs <- fmt.Errorf("goroutine %d: got %q, want %q", g, got, w)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

var decodedSink string

// BenchmarkDecoderString decodes 4-byte words of a 1,000-word vocabulary, as WordCount's
// records between TaskManagers hold.
func BenchmarkDecoderString(b *testing.B) {
	var bufs [][]byte
	for i := range 1000 {
		bufs = append(bufs, AppendString(nil, fmt.Sprintf("w%03d", i)))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := NewDecoder(bufs[i%len(bufs)])
		decodedSink = d.String()
	}
}
