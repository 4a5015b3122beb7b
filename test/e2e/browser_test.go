package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// browserTimeout bounds each wait for the page; it only guards against hangs.
const browserTimeout = 2 * time.Minute

// chromiumBinary finds headless Chromium: $TIDE_CHROMIUM, else chromium on PATH. Without
// one the browser tests skip, except under CI or TIDE_REQUIRE_CHROMIUM=1, where they fail
// (.ci/test.sh and make ui-test install Debian's chromium package first).
func chromiumBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TIDE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" || os.Getenv("TIDE_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium on PATH: apt-get install -y chromium (make ui-test does it)")
	}
	t.Skip("no chromium on PATH: apt-get install -y chromium, or make ui-test, to run the browser test")
	return ""
}

// browser is one headless Chromium tab driven over the DevTools protocol; screenshots
// go to the test's artifact directory (go test -artifacts keeps them).
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string
}

func newBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.DisableGPU,
		chromedp.WindowSize(1400, 900), chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", bin, err)
	}
	return &browser{t: t, ctx: ctx, dir: t.ArtifactDir()}
}

// do runs steps, failing the test (with a screenshot of the page) when they fail.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

func (b *browser) fail(what string, err error) {
	b.t.Helper()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("not within %s: %w", browserTimeout, err)
	}
	b.screenshot("failure.png")
	text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	b.t.Fatalf("%s: %v\nthe page said:\n%s", what, err, text)
}

// wait polls a JavaScript predicate in the page until it holds.
func (b *browser) wait(what, predicate string) {
	b.t.Helper()
	b.do("waiting for "+what, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(browserTimeout)))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.fail("evaluating "+expr, err)
	}
	return v
}

// refreshed waits until the page has refreshed its data once more than now.
func (b *browser) refreshed() {
	b.t.Helper()
	n := eval[string](b, `document.body.dataset.refreshes || '0'`)
	b.wait("a refresh of the page", fmt.Sprintf(`Number(document.body.dataset.refreshes || 0) > %s`, n))
}

// tab switches to a tab of the page the way a person does, and waits for its data.
func (b *browser) tab(id string) {
	b.t.Helper()
	b.do("opening tab "+id, chromedp.Click(chromedp.CSS("#tab-"+id)))
	b.wait("tab "+id, fmt.Sprintf(`document.getElementById('page').dataset.page === %q`, id))
	b.refreshed()
}

// hover moves the mouse to the middle of the element the JavaScript expression el yields.
func (b *browser) hover(el string) {
	b.t.Helper()
	pt := eval[[]float64](b, `(() => { const r = (`+el+`).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	b.do("hovering "+el, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pt[0], pt[1]))
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	b.save(name, png, err)
}

// screenshotOf saves a picture of the smallest box around every element sel matches.
func (b *browser) screenshotOf(sel, name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.Screenshot(chromedp.CSSAll(sel)))
	b.save(name, png, err)
}

func (b *browser) save(name string, png []byte, err error) {
	b.t.Helper()
	if err == nil {
		err = os.WriteFile(filepath.Join(b.dir, name), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot %s", filepath.Join(b.dir, name))
}
