package core_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tidestream/tide"

// testSupport holds test helpers (scripts, flags, files): production code must not
// import it, and it is exempt from the purity rules.
const testSupport = "coretest"

// forbiddenImports are never allowed in core/ (prefix match on whole path elements).
var forbiddenImports = []string{"net", "os", "syscall", "unsafe", "plugin", "io/ioutil", "os/exec", "os/signal"}

// forbiddenTime are the time functions that read or wait on the wall clock.
var forbiddenTime = map[string]bool{"Now": true, "Sleep": true, "Since": true, "Until": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}

// seededRand are the only math/rand names allowed: constructors that take an explicit
// seed or source, and the types.
var seededRand = map[string]map[string]bool{
	"math/rand":    {"New": true, "NewSource": true, "Rand": true, "Source": true},
	"math/rand/v2": {"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true, "Rand": true, "Source": true, "PCG": true, "ChaCha8": true, "Zipf": true},
}

// TestDependencyRule: core/ imports only the standard library and itself, never the
// network, the file system or the wall clock, never an unseeded random source, and starts
// no goroutines: events in, effects out.
func TestDependencyRule(t *testing.T) {
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		checkFile(t, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("checked only %d files: the walk is broken", files)
	}
}

// reporter is the part of testing.T the checker uses.
type reporter interface {
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

func checkFile(t *testing.T, path string) {
	t.Helper()
	checkFileInto(t, path)
}

func checkFileInto(t reporter, path string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	support := strings.HasPrefix(filepath.ToSlash(path), testSupport+"/")
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if p == "math/rand/v2" {
			name = "rand"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
		pos := fset.Position(imp.Pos())
		first, _, _ := strings.Cut(p, "/")
		switch {
		case p == module+"/core/"+testSupport && !support:
			t.Errorf("%s: production code imports the test support package %s", pos, p)
		case strings.HasPrefix(p, module+"/core"):
		case strings.Contains(first, "."):
			t.Errorf("%s: imports %s: core/ may import only the standard library and core/...", pos, p)
		case support:
		default:
			for _, bad := range forbiddenImports {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s: imports %s: core/ must not touch %s", pos, p, bad)
				}
			}
		}
	}
	if support {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			t.Errorf("%s: go statement: core/ starts no goroutines", fset.Position(n.Pos()))
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch p := names[id.Name]; {
			case p == "time" && forbiddenTime[n.Sel.Name]:
				t.Errorf("%s: time.%s: core/ gets time from events only", fset.Position(n.Pos()), n.Sel.Name)
			case seededRand[p] != nil && !seededRand[p][n.Sel.Name]:
				t.Errorf("%s: %s.%s: only explicitly seeded random sources are allowed in core/", fset.Position(n.Pos()), p, n.Sel.Name)
			}
		}
		return true
	})
}

// TestDependencyRuleCatches makes sure the checker itself reports violations.
func TestDependencyRuleCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package bad\nimport (\n\"net/http\"\n\"time\"\n\"math/rand/v2\"\n\"github.com/x/y\"\n)\nfunc f() { go f(); _ = time.Now(); _ = rand.IntN(3); _ = http.MethodGet; _ = y.Z }\n"
	path := filepath.Join(dir, "bad.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	checkFileInto(rec, path)
	for _, want := range []string{"net/http", "time.Now", "IntN", "go statement", "github.com/x/y"} {
		if !strings.Contains(strings.Join(rec.errs, "\n"), want) {
			t.Errorf("checker missed %q; reported:\n%s", want, strings.Join(rec.errs, "\n"))
		}
	}
}

type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
