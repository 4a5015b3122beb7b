package chaos

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

var localSpec = Spec{Steps: 12, Initial: 3, Max: 4, Local: true, MinWait: 300 * time.Millisecond, MaxWait: 2 * time.Second, MaxPause: 2 * time.Second, ZombiePause: 5 * time.Second}

func TestPlanIsTheSeedsAlone(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		a, b := Plan(seed, localSpec), Plan(seed, localSpec)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two plans differ:\n%v\n%v", seed, a, b)
		}
	}
	if reflect.DeepEqual(Plan(1, localSpec), Plan(2, localSpec)) {
		t.Fatal("seeds 1 and 2 plan the same actions")
	}
}

// TestLocalPlanBounds replays every local plan against the cluster it models: targets are
// running and unblocked, at least one TaskManager is always left and at most Max run, and
// each plan holds the required faults.
func TestLocalPlanBounds(t *testing.T) {
	for seed := uint64(0); seed < 500; seed++ {
		plan := Plan(seed, localSpec)
		live := map[string]bool{"tm-1": true, "tm-2": true, "tm-3": true}
		started := 3
		kinds := map[Kind]int{}
		for i, a := range plan {
			kinds[a.Kind]++
			if a.Wait < localSpec.MinWait || a.Wait > localSpec.MaxWait {
				t.Fatalf("seed %d step %d %s: wait outside [%s, %s]", seed, i, a, localSpec.MinWait, localSpec.MaxWait)
			}
			switch a.Kind {
			case Start:
				started++
				if a.Target != tmName(started) || live[a.Target] {
					t.Fatalf("seed %d step %d %s: want a new tm-%d", seed, i, a, started)
				}
				live[a.Target] = true
			case Kill, Evacuate, KillMidCheckpoint, Pause, Zombie:
				if !live[a.Target] {
					t.Fatalf("seed %d step %d %s: target not running and unblocked (%v)", seed, i, a, live)
				}
				if a.Kind != Pause {
					delete(live, a.Target)
				}
				if a.Kind == Zombie && a.Pause != localSpec.ZombiePause {
					t.Fatalf("seed %d step %d %s: want a freeze of %s", seed, i, a, localSpec.ZombiePause)
				}
			default:
				t.Fatalf("seed %d step %d: %s in a local plan", seed, i, a)
			}
			if len(live) < 1 || len(live) > localSpec.Max {
				t.Fatalf("seed %d step %d %s: %d TaskManagers left", seed, i, a, len(live))
			}
		}
		if kinds[KillMidCheckpoint] == 0 || kinds[Evacuate] == 0 || kinds[Zombie] == 0 {
			t.Fatalf("seed %d: plan %v lacks a required fault", seed, plan)
		}
	}
}

func TestYARNPlanKillsTheAMOnce(t *testing.T) {
	spec := Spec{Steps: 6, MinWait: time.Second, MaxWait: 3 * time.Second, MaxPause: time.Second}
	for seed := uint64(0); seed < 200; seed++ {
		n := 0
		for _, a := range Plan(seed, spec) {
			if a.Kind == KillAM {
				n++
			}
			if a.Kind == Start || a.Target != "" {
				t.Fatalf("seed %d: %s in a YARN plan", seed, a)
			}
		}
		if n != 1 {
			t.Fatalf("seed %d: %d AM kills, want 1", seed, n)
		}
	}
}

func TestActionString(t *testing.T) {
	for _, tt := range []struct {
		a    Action
		want string
	}{
		{Action{Kind: Kill, Target: "tm-2", Wait: time.Second}, "kill tm-2, then wait 1s"},
		{Action{Kind: Pause, Target: "tm-1", Pause: 300 * time.Millisecond, Wait: time.Second}, "pause tm-1 for 300ms, then wait 1s"},
		{Action{Kind: Evacuate, Pick: 7, Via: ViaCLI, Wait: time.Second}, "evacuate pick=7 via cli, then wait 1s"},
		{Action{Kind: KillAM, Wait: time.Second}, "kill-am, then wait 1s"},
		{Action{Kind: Zombie, Target: "tm-3", Pause: 5 * time.Second, Wait: time.Second}, "zombie tm-3 for 5s, then wait 1s"},
	} {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	if NodeOf("tm-12") != "local-12" {
		t.Errorf("NodeOf(tm-12) = %q", NodeOf("tm-12"))
	}
}

func TestFinalIsTheSeeds(t *testing.T) {
	kinds := map[FinalKill]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		k, p := Final(seed)
		k2, p2 := Final(seed)
		if k != k2 || p != p2 {
			t.Fatalf("seed %d: Final differs between calls", seed)
		}
		kinds[k] = true
	}
	if !kinds[FinalEarly] || !kinds[FinalLate] {
		t.Fatalf("20 seeds chose only %v", kinds)
	}
}

func TestParseSeeds(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    []uint64
		wantErr string
	}{
		{"1,2,3", []uint64{1, 2, 3}, ""},
		{" 7 8,\t9 ", []uint64{7, 8, 9}, ""},
		{"18446744073709551615", []uint64{18446744073709551615}, ""},
		{"", nil, "no seeds"},
		{",,", nil, "no seeds"},
		{"1,x", nil, `seed "x" is not an unsigned integer`},
		{"-1", nil, `seed "-1"`},
		{"4,4", nil, "seed 4 given twice"},
	} {
		got, err := ParseSeeds(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), SeedsEnv) {
				t.Errorf("ParseSeeds(%q) = %v, %v; want an error naming %s with %q", tt.in, got, err, SeedsEnv, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1,2,3", "", "4,4", "x", "1 2\t3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seeds, err := ParseSeeds(s)
		if err != nil {
			return
		}
		if len(seeds) == 0 {
			t.Fatalf("ParseSeeds(%q) accepted an empty list", s)
		}
		seen := map[uint64]bool{}
		for _, v := range seeds {
			if seen[v] {
				t.Fatalf("ParseSeeds(%q) = %v: duplicate", s, seeds)
			}
			seen[v] = true
		}
	})
}

func TestJournal(t *testing.T) {
	var buf bytes.Buffer
	j := NewJournal(&buf, 42, "make chaos SEED=42")
	j.Printf("kill %s", "tm-2")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "chaos seed 42 (replay: make chaos SEED=42)") || !strings.Contains(lines[1], "seed=42 kill tm-2") {
		t.Fatalf("journal printed:\n%s", buf.String())
	}
	if j.String() != strings.TrimSpace(buf.String()) {
		t.Fatalf("String() = %q, want what was printed", j.String())
	}
}
