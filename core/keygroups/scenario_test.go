package keygroups

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files of core/testdata/keygroups")

// TestScenarios replays core/testdata/keygroups/*.txt: "maxp N", "factor F" and
// "deploy TM..." (one TaskManager per subtask index) lines; every deployment's ranges,
// holdings and moved key groups are compared to NAME.golden, and validity, balance and
// moved <= LowerBound + Slack are checked on every step.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("../testdata/keygroups/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			got := runScenario(t, file)
			golden := strings.TrimSuffix(file, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from what the placement does now:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

func runScenario(t *testing.T, file string) string {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out    strings.Builder
		maxP   int
		factor = DefaultBalanceFactor
		prev   Placed
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		where := fmt.Sprintf("%s:%d", file, n)
		switch fields[0] {
		case "maxp":
			if maxP, err = strconv.Atoi(fields[1]); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		case "factor":
			if factor, err = strconv.ParseFloat(fields[1], 64); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		case "deploy":
			tms := fields[1:]
			next, err := Assign(maxP, tms, prev, factor)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			moved := check(t, where, maxP, tms, prev, next, factor)
			lb := LowerBound(maxP, prev, tms, factor)
			if slack := Slack(maxP, len(tms), distinct(tms), factor); moved > lb+slack {
				t.Errorf("%s: moved %d, lower bound %d, slack %d", where, moved, lb, slack)
			}
			fmt.Fprintf(&out, "%s\n", line)
			held := map[string]int{}
			for i, r := range next {
				fmt.Fprintf(&out, "  %d: %s on %s\n", i, r, tms[i])
				held[tms[i]] += r.Len()
			}
			names := make([]string, 0, len(held))
			for tm := range held {
				names = append(names, tm)
			}
			slices.Sort(names)
			lo, hi := Bounds(maxP, len(tms), factor)
			fmt.Fprintf(&out, "  per subtask %d..%d; held:", lo, hi)
			for _, tm := range names {
				fmt.Fprintf(&out, " %s=%d", tm, held[tm])
			}
			fmt.Fprintf(&out, "\n  moved %d (lower bound %d)\n", moved, lb)
			prev = Placed{Ranges: next, TaskManagers: tms}
		default:
			t.Fatalf("%s: unknown command %q, want maxp, factor or deploy", where, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
