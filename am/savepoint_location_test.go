package am

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/storage"
)

// TestParseSavepointLocation: an absolute path is taken literally, a URI is percent-decoded;
// both forms of one directory give the same URI, which parses back to itself.
func TestParseSavepointLocation(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "/tmp/a b/sp", want: "file:///tmp/a%20b/sp"},
		{in: "file:///tmp/a%20b/sp", want: "file:///tmp/a%20b/sp"},
		{in: "file:///tmp/a b/sp", want: "file:///tmp/a%20b/sp"},
		{in: "/tmp/x #1 100%/sp", want: "file:///tmp/x%20%231%20100%25/sp"},
		{in: "file:///tmp/x%20%231%20100%25/sp", want: "file:///tmp/x%20%231%20100%25/sp"},
		{in: "file://localhost/tmp/sp/", want: "file:///tmp/sp"},
		{in: "FILE:///tmp/./a/../sp", want: "file:///tmp/sp"},
		{in: "file:///../../etc", want: "file:///etc"},
		{in: "hdfs://nn:8020/save%20points/sp", want: "hdfs://nn:8020/save%20points/sp"},
		{in: "hdfs:///sp", want: "hdfs:///sp"},
		{in: "sp", err: "expected an absolute path or a URI"},
		{in: "", err: "empty"},
		{in: "a/b://c", err: "expected an absolute path or a URI"},
		{in: "s3://bucket/sp", err: `scheme "s3"`},
		{in: "file:///tmp/100%/sp", err: "write a space as %20"},
		{in: "file:///tmp/a#b", err: "fragment"},
		{in: "file:///tmp/a?b", err: "query"},
		{in: "file://host/tmp", err: `host "host"`},
		{in: "/tmp/a\nb", err: "newline"},
		{in: "file:///tmp/a%0Ab", err: "newline"},
	} {
		u, err := parseSavepointLocation(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, errSavepointLocation) {
				t.Errorf("parseSavepointLocation(%q) = %v, %v; want an error with %q", tc.in, u, err, tc.err)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("parseSavepointLocation(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
			continue
		}
		if again, err := parseSavepointLocation(u.String()); err != nil || again.String() != u.String() {
			t.Errorf("the printed form %s parses to %v, %v", u, again, err)
		}
	}
}

// FuzzParseSavepointLocation: what parses prints as a URI that parses back to the same
// directory, and a clean absolute path never escapes upwards.
func FuzzParseSavepointLocation(f *testing.F) {
	for _, s := range []string{"/tmp/a b/sp", "file:///tmp/a%20b", "hdfs://nn:8020/x/../y", "file:///../../etc", "/x/%zz#?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := parseSavepointLocation(raw)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u.Path, "/") || strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") {
			t.Fatalf("parseSavepointLocation(%q): path %q is not clean", raw, u.Path)
		}
		again, err := parseSavepointLocation(u.String())
		if err != nil || again.String() != u.String() || again.Path != u.Path {
			t.Fatalf("parseSavepointLocation(%q) prints %s, which parses to %v, %v", raw, u, again, err)
		}
	})
}

// TestSavepointRoots: targets only under state.savepoints.dir or an allowed directory,
// after normalization and with symbolic links resolved; the refusal names the target and
// the roots.
func TestSavepointRoots(t *testing.T) {
	base := t.TempDir()
	sp, extra, outside := filepath.Join(base, "sp"), filepath.Join(base, "extra dir"), t.TempDir()
	for _, d := range []string{sp, extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(sp, "escape")); err != nil {
		t.Fatal(err)
	}
	roots, err := newSavepointRoots("file://"+sp, " "+extra+" ; hdfs://nn:8020/savepoints ")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		ok     bool
	}{
		{"file://" + sp, true},
		{sp + "/job-a", true},
		{sp + "/new/deeper", true},
		{extra + "/x", true},
		{"file://" + strings.ReplaceAll(extra, " ", "%20") + "/x", true},
		{"hdfs://nn:8020/savepoints/x", true},
		{"hdfs://NN:8020/savepoints", true},
		{"file:///../../etc", false},
		{sp + "/../outside", false},
		{sp + "-evil/x", false},
		{base, false},
		{sp + "/escape/x", false},
		{"hdfs://other:8020/savepoints/x", false},
		{"hdfs:///savepoints/x", false},
		{"hdfs://nn:8020/savepoints-x", false},
		{"/etc", false},
	} {
		u, err := parseSavepointLocation(tc.target)
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		err = roots.check(u)
		if tc.ok != (err == nil) {
			t.Errorf("check(%s) = %v, want allowed %v", tc.target, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), u.String()) || !strings.Contains(err.Error(), "file://"+sp) ||
			!strings.Contains(err.Error(), "hdfs://nn:8020/savepoints") || !strings.Contains(err.Error(), savepointsAllowedDirsKey)) {
			t.Errorf("check(%s) = %q: want the target, every root and the keys named", tc.target, err)
		}
	}
	none, err := newSavepointRoots("", "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := parseSavepointLocation(sp)
	if err := none.check(u); err == nil || !strings.Contains(err.Error(), savepointsDirKey) || !strings.Contains(err.Error(), savepointsAllowedDirsKey) {
		t.Errorf("no roots configured: %v, want a refusal naming both keys", err)
	}
	if _, err := newSavepointRoots("", "/ok;relative/x"); err == nil || !strings.Contains(err.Error(), savepointsAllowedDirsKey) {
		t.Errorf("a relative allowed directory: %v, want an error naming %s", err, savepointsAllowedDirsKey)
	}
}

// TestRESTSavepointTargetOutsideRoots: POST /savepoints with a target outside the
// configured roots is a 400 naming the target and the roots, and nothing is written there.
func TestRESTSavepointTargetOutsideRoots(t *testing.T) {
	sp, outside := t.TempDir(), t.TempDir()
	r := startRESTAM(t, restAMOptions{dynamic: []string{"state.savepoints.dir=file://" + sp}})
	for _, target := range []string{"file:///../../etc", outside, "file://" + sp + "/../" + filepath.Base(outside)} {
		body := `{"target-directory":"` + target + `"}`
		code, _, resp := r.call(t, "POST", jobPath+"/savepoints", body)
		if code != http.StatusBadRequest {
			t.Fatalf("POST savepoints %s = %d %s, want 400", body, code, resp)
		}
		msg := strings.Join(errorsOf(t, resp), " ")
		if !strings.Contains(msg, "outside the allowed savepoint directories") || !strings.Contains(msg, "file://"+sp) {
			t.Errorf("POST savepoints %s: %q, want the target refused naming the roots", body, msg)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the roots: %v", entries)
	}
}

// TestLoadSavepointUnderPathWithSpaces: a savepoint written under a directory whose name has
// a space, '#' and '%' is named by the URI it was written to, and loads from that URI, from
// the literal path and from the literal path of its _metadata file.
func TestLoadSavepointUnderPathWithSpaces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save points #1 100%")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(context.Background(), (&url.URL{Scheme: "file", Path: dir}).String(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	loc := takeSavepoint(t, st)
	u, err := url.Parse(loc)
	if err != nil || !strings.HasPrefix(u.Path, dir+"/") {
		t.Fatalf("savepoint written to %s (%v), want a URI of a directory under %q", loc, err, dir)
	}
	for _, form := range []string{loc, u.Path, u.Path + "/_metadata"} {
		sp, _, err := loadSavepoint(context.Background(), form, savepointJob(128, true), false)
		if err != nil {
			t.Errorf("loadSavepoint(%q): %v", form, err)
			continue
		}
		if sp.location != loc {
			t.Errorf("loadSavepoint(%q) names it %s, want %s", form, sp.location, loc)
		}
	}
}
