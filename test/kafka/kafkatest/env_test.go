package kafkatest

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string
		check    func(t *testing.T, e *Env)
	}{
		{
			name: "complete",
			in:   "# c\nKAFKA_BOOTSTRAP=127.0.0.1:9092\n\nKAFKA_PID=42\nKAFKA_LOG=/l\nKAFKA_CLASSPATH_FILE=/cp\n",
			check: func(t *testing.T, e *Env) {
				if e.Bootstrap != "127.0.0.1:9092" || e.PID != 42 || e.Log != "/l" || e.ClasspathFile != "/cp" {
					t.Fatalf("got %+v", e)
				}
			},
		},
		{name: "missing bootstrap", in: "KAFKA_PID=1\n", wantErr: "KAFKA_BOOTSTRAP is missing"},
		{name: "missing pid", in: "KAFKA_BOOTSTRAP=h:1\n", wantErr: "KAFKA_PID is missing"},
		{name: "bad pid", in: "KAFKA_BOOTSTRAP=h:1\nKAFKA_PID=x\n", wantErr: `KAFKA_PID "x"`},
		{name: "empty pid", in: "KAFKA_BOOTSTRAP=h:1\nKAFKA_PID=\n", wantErr: "KAFKA_PID is missing"},
		{name: "negative pid", in: "KAFKA_BOOTSTRAP=h:1\nKAFKA_PID=-3\n", wantErr: `KAFKA_PID "-3"`},
		{name: "bad line (see testkit.ParseEnv)", in: "KAFKA_BOOTSTRAP h:1\n", wantErr: "line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tc.check(t, e)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("KAFKA_BOOTSTRAP=h:1\nKAFKA_PID=7\n")
	f.Add("# x\n=\n")
	f.Fuzz(func(t *testing.T, in string) {
		e, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		if e.Bootstrap == "" || e.PID <= 0 {
			t.Fatalf("accepted %q without a bootstrap address or pid: %+v", in, e)
		}
	})
}
