package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
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
//
// The assets are read and hashed on the first request, not when the AM starts: the AM's
// start is on the way to a job's first record, and most AMs never serve the page.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files, err := loaded()
		if err != nil { // the embed directive and TestEveryModuleIsEmbedded guarantee them
			http.Error(w, fmt.Sprintf("the web page's embedded assets: %v", err), http.StatusInternalServerError)
			return
		}
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

// loaded is load, once per process.
var loaded = sync.OnceValues(load)

// contentTypes are the Content-Types of the assets' file types, fixed here rather than
// taken from mime.TypeByExtension, which reads the machine's MIME tables (a few ms) and
// answers differently from machine to machine.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// load reads every embedded file: name relative to assets/ -> content.
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
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("%s: no Content-Type for %q files", p, path.Ext(p))
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
