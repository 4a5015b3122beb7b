package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// assets holds index.html and the ui/ folder the page loads.
//
//go:embed assets
var assets embed.FS

// Patterns are the paths the page is served under, as net/http.ServeMux patterns; a REST
// router mounts Handler at each of them.
var Patterns = []string{"GET /{$}", "GET /ui/"}

// contentSecurityPolicy keeps the page to its own scripts, styles and API.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; frame-ancestors 'self'; base-uri 'self'; form-action 'none'"

type asset struct {
	body        []byte
	etag        string
	contentType string
}

// Handler serves GET / (the page) and GET /ui/<file> (its scripts and styles) from the
// embedded assets; any other path is answered 404. Assets carry an ETag and must be
// revalidated, so a new AM binary's page is picked up at once.
func Handler() http.Handler {
	files, err := load()
	if err != nil {
		panic(fmt.Sprintf("web: embedded assets: %v", err)) // the embed directive guarantees them
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" {
			name = "index.html"
		}
		a, ok := files[name]
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.Error(w, fmt.Sprintf("Not found: %s %s (the page is at ./ and its files under ui/)", r.Method, r.URL.Path), http.StatusNotFound)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("ETag", a.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

// load reads every embedded file once: name relative to assets/ -> content.
func load() (map[string]asset, error) {
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	out := map[string]asset{}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[p] = asset{body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, contentType: ct}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := out["index.html"]; !ok {
		return nil, fmt.Errorf("index.html is missing")
	}
	return out, nil
}
