package keygroups

import (
	"fmt"
	"testing"
)

// BenchmarkAssign: a rescale of one vertex with maxParallelism 32768 from 1000 to 1200
// subtasks on 100 TaskManagers, 20 of them new.
func BenchmarkAssign(b *testing.B) {
	const maxP = 32768
	tms := func(p, n, first int) []string {
		out := make([]string, p)
		for i := range out {
			out[i] = fmt.Sprintf("tm-%d", first+i%n)
		}
		return out
	}
	before := tms(1000, 80, 0)
	prev := Placed{Ranges: Default(maxP, 1000), TaskManagers: before}
	after := tms(1200, 100, 0)
	for b.Loop() {
		if _, err := Assign(maxP, after, prev, DefaultBalanceFactor); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzAssign: whatever the TaskManagers, previous placement and factor, Assign returns a
// partition within the balance bounds.
func FuzzAssign(f *testing.F) {
	f.Add(uint16(128), []byte{0, 1, 2}, []byte{0, 1}, uint8(20))
	f.Add(uint16(7), []byte{3, 3, 1}, []byte{}, uint8(10))
	f.Fuzz(func(t *testing.T, maxP16 uint16, next, before []byte, factor10 uint8) {
		maxP := 1 + int(maxP16%2048)
		factor := 1 + float64(factor10%40)/10
		name := func(b byte) string { return fmt.Sprintf("tm-%d", b%8) }
		if len(next) == 0 || len(next) > maxP || len(before) > maxP {
			return
		}
		var prev Placed
		if len(before) > 0 {
			prev = Placed{Ranges: Default(maxP, len(before))}
			for _, b := range before {
				prev.TaskManagers = append(prev.TaskManagers, name(b))
			}
		}
		tms := make([]string, len(next))
		for i, b := range next {
			tms[i] = name(b)
		}
		a, err := Assign(maxP, tms, prev, factor)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "fuzz", maxP, tms, prev, a, factor)
	})
}
