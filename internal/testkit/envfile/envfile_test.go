package envfile_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/internal/testkit/envfile"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		wantErr  string
	}{
		{name: "empty", in: "", want: map[string]string{}},
		{name: "comments, blanks and spaces", in: "# c\n\n A = 1 \nB=x=y\nC=\n", want: map[string]string{"A": "1", "B": "x=y", "C": ""}},
		{name: "not key=value", in: "A=1\nB 2\n", wantErr: `line 2: "B 2" is not KEY=value`},
		{name: "empty key", in: "=1\n", wantErr: "line 1"},
		{name: "blank in key", in: "A B=1\n", wantErr: "line 1"},
		{name: "duplicate", in: "A=1\n# c\nA=2\n", wantErr: "line 3: A set twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := envfile.Parse(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("Parse = %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("A=1\n# c\n\nB = x=y \n")
	f.Add("# x\n=\n")
	f.Add("A=1\nA=2\n")
	f.Fuzz(func(t *testing.T, in string) {
		vars, err := envfile.Parse(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("envfile.Parse(%q) error %q names no line", in, err)
			}
			return
		}
		for k, v := range vars {
			if k == "" || strings.ContainsAny(k, " \t=") || strings.HasPrefix(k, "#") {
				t.Fatalf("envfile.Parse(%q) accepted key %q", in, k)
			}
			if v != strings.TrimSpace(v) {
				t.Fatalf("envfile.Parse(%q): value %q of %s not trimmed", in, v, k)
			}
			// Every pair reads back from the line it came from.
			if !strings.Contains(in, k) || !strings.Contains(in, v) {
				t.Fatalf("envfile.Parse(%q) made up %s=%s", in, k, v)
			}
		}
	})
}

func TestRequireKeys(t *testing.T) {
	vars := map[string]string{"A": "1", "E": ""}
	if err := envfile.RequireKeys(vars, "A"); err != nil {
		t.Fatalf("envfile.RequireKeys(A) = %v", err)
	}
	err := envfile.RequireKeys(vars, "C", "A", "E", "B")
	if err == nil || err.Error() != "C is missing\nE is missing\nB is missing" {
		t.Fatalf("RequireKeys = %q, want C, E and B named in order", err)
	}
}

// TestEnvFile: the file is found through its variable or below the repository root, and a
// missing service skips a test, or fails it when the require variable is 1.
func TestEnvFile(t *testing.T) {
	f := envfile.File{Service: "Test service", PathVar: "TIDE_TESTKIT_ENV", Default: ".cache/testkit/env",
		RequireVar: "TIDE_REQUIRE_TESTKIT", Start: "make testkit-up"}

	t.Setenv(f.PathVar, "")
	p, err := f.Path()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, ".cache", "testkit", "env"); p != want {
		t.Fatalf("default Path = %s, want %s", p, want)
	}

	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	if err := os.WriteFile(good, []byte("HOST=h:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("HOST h:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(f.PathVar, good)
	vars, path, err := f.Load()
	if err != nil || path != good || vars["HOST"] != "h:1" {
		t.Fatalf("Load = %v, %s, %v", vars, path, err)
	}
	t.Setenv(f.PathVar, bad)
	if _, _, err := f.Load(); err == nil || !strings.Contains(err.Error(), "env file "+bad+": line 1") {
		t.Fatalf("Load of a bad file = %v, want the file and line named", err)
	}
	t.Setenv(f.PathVar, filepath.Join(dir, "absent"))
	_, _, err = f.Load()
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of an absent file = %v, want os.ErrNotExist", err)
	}

	for _, tt := range []struct{ require, wantFail, wantSkip string }{
		{"1", "Test service not running: run `make testkit-up` (reading env file", ""},
		{"0", "", "Test service not running: run `make testkit-up`"},
		{"", "", "Test service not running"},
	} {
		t.Setenv(f.RequireVar, tt.require)
		end := testkit.Catch(t, func(tb testing.TB) { f.Missing(tb, err) })
		if !strings.HasPrefix(end.Failed, tt.wantFail) || (tt.wantFail == "") != (end.Failed == "") {
			t.Errorf("%s=%q: failed with %q, want %q", f.RequireVar, tt.require, end.Failed, tt.wantFail)
		}
		if tt.wantFail != "" && !strings.HasSuffix(end.Failed, "TIDE_REQUIRE_TESTKIT=1 requires it") {
			t.Errorf("failure %q does not name TIDE_REQUIRE_TESTKIT", end.Failed)
		}
		if !strings.HasPrefix(end.Skipped, tt.wantSkip) || (tt.wantSkip == "") != (end.Skipped == "") {
			t.Errorf("%s=%q: skipped with %q, want %q", f.RequireVar, tt.require, end.Skipped, tt.wantSkip)
		}
	}
}
