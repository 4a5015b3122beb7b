package tidecli

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeArgs(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"tide", "jobmanager", "-Drest.port=1"}, []string{"tide", "jobmanager", "-D", "rest.port=1"}},
		{[]string{"tide", "-D", "a=b"}, []string{"tide", "-D", "a=b"}},
		{[]string{"tide", "x", "--", "-Dkept=1"}, []string{"tide", "x", "--", "-Dkept=1"}},
		{[]string{"tide", "-D=x"}, []string{"tide", "-D=x"}},
		{[]string{"tide", "-Dk=v=w"}, []string{"tide", "-D", "k=v=w"}},
	}
	for _, tt := range tests {
		if got := normalizeArgs(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("normalizeArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzNormalizeArgs(f *testing.F) {
	f.Add("tide jobmanager -Da=b -- -Dc=d")
	f.Add("-D -Dx=")
	f.Fuzz(func(t *testing.T, line string) {
		in := strings.Fields(line)
		out := normalizeArgs(in)
		// Nothing is lost: rejoining each rewritten "-D" with its value gives the input.
		var back []string
		for i := 0; i < len(out); i++ {
			if out[i] == "-D" && i+1 < len(out) && len(back) < len(in) && in[len(back)] != "-D" {
				back = append(back, "-D"+out[i+1])
				i++
				continue
			}
			back = append(back, out[i])
		}
		if !reflect.DeepEqual(back, in) && !(len(back) == 0 && len(in) == 0) {
			t.Fatalf("normalizeArgs(%q) = %q: does not rejoin to the input (%q)", in, out, back)
		}
	})
}

func TestDefaultJobID(t *testing.T) {
	a := defaultJobID("WordCount", []string{"--input", "x"})
	if err := validJobID(a); err != nil {
		t.Fatal(err)
	}
	if a != defaultJobID("WordCount", []string{"--input", "x"}) {
		t.Fatal("job id not stable")
	}
	if a == defaultJobID("WordCount", []string{"--input", "y"}) {
		t.Fatal("different arguments share a job id")
	}
	for _, bad := range []string{"", "xyz", strings.Repeat("g", 32)} {
		if validJobID(bad) == nil {
			t.Errorf("validJobID(%q) accepted", bad)
		}
	}
}
