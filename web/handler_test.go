package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlerServesAssets(t *testing.T) {
	h := Handler()
	tests := []struct {
		method, path string
		code         int
		contentType  string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"HEAD", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/ui/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/ui/style.css", 200, "text/css; charset=utf-8"},
		{"GET", "/ui/favicon.svg", 200, "image/svg+xml"},
		{"GET", "/ui/missing.js", 404, "text/plain; charset=utf-8"},
		{"GET", "/ui/", 404, "text/plain; charset=utf-8"},
		{"GET", "/ui/../index.html", 404, "text/plain; charset=utf-8"},
		{"POST", "/", 404, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		rec := get(t, h, tt.method, tt.path)
		if rec.Code != tt.code || rec.Header().Get("Content-Type") != tt.contentType {
			t.Errorf("%s %s = %d %q, want %d %q", tt.method, tt.path, rec.Code, rec.Header().Get("Content-Type"), tt.code, tt.contentType)
		}
		if tt.code == 200 && (rec.Header().Get("Content-Security-Policy") == "" || rec.Header().Get("Cache-Control") != "no-cache") {
			t.Errorf("%s %s: headers %v lack the CSP or no-cache", tt.method, tt.path, rec.Header())
		}
	}
}

func TestHandlerRevalidatesWithETag(t *testing.T) {
	h := Handler()
	first := get(t, h, "GET", "/ui/app.js")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if again := get(t, h, "GET", "/ui/app.js", "If-None-Match", etag); again.Code != http.StatusNotModified {
		t.Fatalf("GET with If-None-Match %s = %d, want 304", etag, again.Code)
	}
}

// TestAssetsUseRelativeURLs: behind YARN's web proxy the page lives under
// /proxy/<application id>/, so no asset may point at an absolute path or another host.
func TestAssetsUseRelativeURLs(t *testing.T) {
	absolute := regexp.MustCompile(`(?:src|href)="/|(?:fetch|get|send)\(\s*['"]/|import [^;]*from '/|https?://`)
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(body), "http://www.w3.org/2000/svg", "")
		if m := absolute.FindString(text); m != "" {
			t.Errorf("%s refers to %q: the page must use relative URLs only", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryModuleIsEmbedded: each module an asset imports is there.
func TestEveryModuleIsEmbedded(t *testing.T) {
	files, err := load()
	if err != nil {
		t.Fatal(err)
	}
	imp := regexp.MustCompile(`from '\./([^']+)'`)
	for name, a := range files {
		for _, m := range imp.FindAllStringSubmatch(string(a.body), -1) {
			if _, ok := files["ui/"+m[1]]; !ok {
				t.Errorf("%s imports ./%s, which is not embedded", name, m[1])
			}
		}
	}
}
