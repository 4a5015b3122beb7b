package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestWebPageInBrowser drives the job's web page in headless Chromium against a real AM
// and TaskManagers: the page shows the running job; TaskManagers that join and one that
// dies appear on the rescale timeline; a node blocked from the page (the AM wants a bearer
// token, which the page asks for) is in GET /blocklist, and unblocked from the page it is
// gone; the checkpoints tab shows each entry's type, a savepoint with its format. Screenshots of every tab go to the test's artifact directory (go test -artifacts).
func TestWebPageInBrowser(t *testing.T) {
	bin := chromiumBinary(t)
	const token = "web-page-test-token"
	dyn := append(reactive(t.TempDir(), "500 ms"), "rest.auth.token="+token, "state.savepoints.dir=file://"+t.TempDir())
	c := startCluster(t, examples.TopSpeedWindowingName, []string{"--cars", "4"}, 1, dyn)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 1)
	waitCheckpointIn(t, c, id, d.Attempt)

	b := newBrowser(t, bin)
	b.do("opening the page", chromedp.Navigate("http://"+c.RESTAddress()+"/?refresh=500"))
	b.wait("the running job in the header", `document.getElementById('job-state').textContent === 'RUNNING' &&
		document.getElementById('job-name').textContent === 'TopSpeedWindowing'`)
	b.wait("vertex cars at parallelism 1", `(document.querySelector('tr[data-vertex="cars"] td.big') || {}).textContent === '1'`)
	b.wait("the records per second of cars (task metrics)", `/^[0-9.]+k?\/s$/.test(document.querySelector('tr[data-vertex="cars"] td.out-rate').textContent)`)
	b.screenshot("overview.png")

	b.tab("rescales")
	b.wait("the initial schedule on the timeline", `document.querySelector('g.rescale-marker[data-trigger="INITIAL_SCHEDULE"]') !== null`)
	for p := 2; p <= 3; p++ {
		if _, err := c.AddTaskManager(t.Context()); err != nil {
			t.Fatal(err)
		}
		b.wait(fmt.Sprintf("the scale-up to %d on the timeline", p), fmt.Sprintf(`%s('cars %d→%d') !== undefined`, markerJS, p-1, p))
		d = waitRunningAt(t, c, id, p)
		waitCheckpointIn(t, c, id, d.Attempt)
	}
	if err := c.Signal("tm-3", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The loss shows as RESOURCE_LOST, or as RECOVERABLE_FAILOVER when a subtask reading
	// from tm-3 fails before the AM sees tm-3's connection drop: either way a rescale 3→2.
	b.wait("the scale-down on the timeline", markerJS+`('cars 3→2') !== undefined`)
	d = waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	b.refreshed()
	b.wait("the rescale history table", `document.querySelectorAll('tr[data-rescale-id]').length >= 4`)
	b.screenshotOf("#rescale-timeline", "rescale-timeline.png")
	b.hover(markerJS + `('cars 3→2').querySelector('rect.hit')`)
	b.wait("the details of the scale-down", `!document.getElementById('tooltip').hidden &&
		document.getElementById('tooltip').textContent.includes('3 → 2')`)
	b.screenshotOf("#rescale-timeline, #tooltip", "rescale-timeline-hover.png")
	b.screenshot("rescales.png")

	// Block a node from the page. The AM has a token: the first try is refused and the
	// page asks for it.
	b.tab("blocklist")
	b.do("filling in the blocklist form",
		chromedp.SendKeys(chromedp.CSS(`#blocklist-form input[name=node]`), "local-2"),
		chromedp.SendKeys(chromedp.CSS(`#blocklist-form input[name=cause]`), "flaky disk (blocked from the web page)"),
		chromedp.SendKeys(chromedp.CSS(`#blocklist-form input[name=timeout]`), "10m"),
		chromedp.Click(chromedp.CSS("#block-node")))
	b.wait("the page to ask for the token", `!document.querySelector('#blocklist-form input[name=token]').closest('.field').hidden &&
		document.querySelector('.msg.error').textContent.includes('bearer token')`)
	if got := blocklist(t, c); len(got) != 0 {
		t.Fatalf("GET /blocklist = %v after a refused request, want it empty", got)
	}
	start := time.Now()
	b.do("entering the token", chromedp.SendKeys(chromedp.CSS(`#blocklist-form input[name=token]`), token),
		chromedp.Click(chromedp.CSS("#block-node")))
	b.wait("local-2 in the page's blocklist", `document.querySelector('table.blocklist tr[data-node="local-2"]') !== null &&
		document.querySelector('.msg.ok').textContent.includes('Blocked local-2')`)
	got := blocklist(t, c)
	n, ok := got["local-2"]
	if !ok || n.Cause != "flaky disk (blocked from the web page)" || n.Action != "MARK_BLOCKED" {
		t.Fatalf("GET /blocklist = %+v, want local-2 blocked (MARK_BLOCKED) with the cause typed into the page", got)
	}
	var end int64
	if _, err := fmt.Sscan(n.EndTimestamp, &end); err != nil {
		t.Fatalf("endTimestamp %q: %v", n.EndTimestamp, err)
	}
	if until := time.UnixMilli(end); until.Before(start.Add(9*time.Minute)) || until.After(time.Now().Add(11*time.Minute)) {
		t.Errorf("local-2 blocked until %s, want about 10 minutes from %s", until, start)
	}
	b.screenshot("blocklist.png")
	b.tab("taskmanagers")
	b.wait("local-2 shown blocked", `document.querySelector('section.node.is-blocked[data-node="local-2"]') !== null`)
	b.wait("what runs on tm-1", `/cars#\d/.test(document.querySelector('tr[data-tm="tm-1"] td.subtask-list').textContent)`)
	b.screenshot("taskmanagers.png")

	b.tab("blocklist")
	b.keepsRow("local-2")
	b.do("removing local-2", chromedp.Click(chromedp.CSS(`button[data-unblock="local-2"]`)))
	b.wait("local-2 gone from the page's blocklist", `document.querySelector('tr[data-node="local-2"]') === null &&
		document.querySelector('.msg.ok').textContent.includes('Unblocked local-2')`)
	if got := blocklist(t, c); len(got) != 0 {
		t.Fatalf("GET /blocklist = %v after the page removed local-2, want it empty", got)
	}

	// Markup in what people type stays text: a node id and a cause with tags.
	b.do("blocking a node named with markup",
		chromedp.SendKeys(chromedp.CSS(`#blocklist-form input[name=node]`), "<i>node"),
		chromedp.SendKeys(chromedp.CSS(`#blocklist-form input[name=cause]`), `<img src=x onerror="document.body.dataset.injected=1">`),
		chromedp.Click(chromedp.CSS("#block-node")))
	b.wait("the node with markup listed as text", `[...document.querySelectorAll('table.blocklist tr[data-node] td:first-child')].some(td => td.textContent === '<i>node')`)
	if n := eval[int](b, `document.querySelectorAll('table.blocklist i, table.blocklist img').length + (document.body.dataset.injected ? 1 : 0)`); n != 0 {
		t.Errorf("markup typed into the blocklist form became %d element(s) of the page", n)
	}
	b.keepsRow("<i>node")
	b.do("removing the node with markup", chromedp.Click(chromedp.CSS(`button[data-unblock="<i>node"]`)))
	b.wait("the node with markup gone", `document.querySelector('table.blocklist') === null`)
	if got := blocklist(t, c); len(got) != 0 {
		t.Fatalf("GET /blocklist = %v after the page removed every node, want it empty", got)
	}

	// A savepoint, for the checkpoints tab to show beside the checkpoints.
	client, err := api.NewClient(api.Config{Address: c.RESTAddress(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	spTrigger, err := client.TriggerSavepoint(t.Context(), id, api.SavepointTriggerRequest{})
	if err != nil {
		t.Fatalf("POST /jobs/%s/savepoints: %v", id, err)
	}
	testkit.WaitFor(t, "the savepoint completed", func() (bool, error) {
		op, err := client.SavepointOperation(t.Context(), id, spTrigger)
		if err == nil && op.Done() && op.Failure() != "" {
			t.Fatalf("savepoint failed: %s", op.Failure())
		}
		return err == nil && op.Done(), err
	})
	b.tab("checkpoints")
	b.wait("the savepoint and its format in the checkpoints table", `[...document.querySelectorAll('tr[data-type="SAVEPOINT"] td.ckpt-type')].some(td => td.textContent === 'SAVEPOINT · CANONICAL') &&
		document.querySelector('tr[data-type="CHECKPOINT"] td.ckpt-type').textContent === 'CHECKPOINT'`)

	for _, tab := range []struct{ id, ready string }{
		{"graph", `document.querySelectorAll('svg.graph g.vertex').length === 2 && document.querySelector('svg.graph text.edge-rate') !== null &&
			document.querySelectorAll('table.subtasks tr[data-tm^="tm-"]').length === 4`},
		{"checkpoints", `document.querySelectorAll('tr[data-checkpoint]').length > 0`},
		{"exceptions", `document.querySelector('#page .card') !== null`},
		{"config", `document.querySelector('tr[data-key="rest.auth.token"]') !== null`},
	} {
		b.tab(tab.id)
		b.wait(tab.id+" filled in", tab.ready)
		b.screenshot(tab.id + ".png")
	}
	if v := eval[string](b, `document.querySelector('tr[data-key="rest.auth.token"] td:last-child').textContent`); v == token {
		t.Errorf("the configuration tab shows the REST token in clear")
	}

	// Behind YARN's web proxy the page lives under /proxy/<application id>/; every request
	// it makes must stay under that prefix.
	const prefix = "/proxy/application_1700000000000_0001"
	proxy, outside := pathProxy(t, prefix, "http://"+c.RESTAddress())
	b.do("opening the page through a path-prefix proxy", chromedp.Navigate(proxy+prefix+"/?refresh=500#/rescales"))
	b.wait("the job and its rescales through the proxy", `document.getElementById('job-state').textContent === 'RUNNING' &&
		document.querySelectorAll('g.rescale-marker').length >= 4`)
	b.tab("checkpoints")
	b.wait("checkpoints through the proxy", `document.querySelectorAll('tr[data-checkpoint]').length > 0`)
	if paths := outside(); len(paths) > 0 {
		t.Errorf("behind a proxy at %s/ the page requested %v", prefix, paths)
	}

	// The timeout a person types into the blocklist form, read by the page's own parser.
	for _, tt := range []struct {
		in   string
		want string // milliseconds, or the start of the error
	}{
		{"10m", "600000"}, {"1h 30m", "5400000"}, {"45 s", "45000"}, {"1.5h", "5400000"}, {"2d", "172800000"},
		{"", "0"}, {"  ", "0"}, {"10", `timeout "10"`}, {"-5m", `timeout "-5m"`}, {"5 weeks", `timeout "5 weeks"`}, {"0s", `timeout "0s"`},
	} {
		got := eval[string](b, fmt.Sprintf(`(async () => { const m = await import('./ui/blocklist.js');
			try { return String(m.parseTimeout(%q)); } catch (e) { return e.message; } })()`, tt.in), chromedp.EvalAwaitPromise)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("parseTimeout(%q) = %q, want %q…", tt.in, got, tt.want)
		}
	}
	// How the page writes durations, sizes and rates.
	for _, tt := range []struct{ expr, want string }{
		{"duration(-1)", "—"}, {"duration(45)", "45 ms"}, {"duration(1500)", "1.5 s"}, {"duration(42000)", "42 s"},
		{"duration(125000)", "2m 05s"}, {"duration(7260000)", "2h 01m"}, {"duration(190000000)", "2d 4h"},
		{"bytes(512)", "512 B"}, {"bytes(1536)", "1.5 KiB"}, {"bytes(52428800)", "50 MiB"},
		{"rate(0)", "0/s"}, {"rate(2.5)", "2.5/s"}, {"rate(242)", "242/s"}, {"rate(12345)", "12.3k/s"}, {"rate(2500000)", "2.5M/s"},
		{"change([{vertex: 'cars', before: 1, after: 2}, {vertex: 'sink', before: 1, after: 2}])", "cars 1→2, sink 1→2"},
	} {
		got := eval[string](b, `(async () => { const f = await import('./ui/format.js'); return String(f.`+tt.expr+`); })()`, chromedp.EvalAwaitPromise)
		if got != tt.want {
			t.Errorf("format.%s = %q, want %q", tt.expr, got, tt.want)
		}
	}

	// When the AM is gone the page says so and greys out what it last knew.
	if err := c.Stop(t.Context()); err != nil {
		t.Logf("stopping the cluster: %v", err)
	}
	b.wait("the page to notice the AM is gone", `document.getElementById('refresh').textContent.startsWith('AM unreachable') &&
		document.body.classList.contains('stale')`)
	b.screenshot("am-gone.png")
}

// pathProxy serves the AM at target under prefix, as YARN's web proxy does, and reports
// the paths requested outside prefix.
func pathProxy(t *testing.T, prefix, target string) (string, func() []string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		outside []string
	)
	forward := http.StripPrefix(prefix, httputil.NewSingleHostReverseProxy(u))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, prefix+"/") {
			if r.URL.Path != "/favicon.ico" { // the browser's own guess, not the page's
				mu.Lock()
				outside = append(outside, r.Method+" "+r.URL.Path)
				mu.Unlock()
			}
			http.NotFound(w, r)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(outside)
	}
}

// keepsRow checks that the blocklist's row of node, with its Remove button, is the same
// element after a refresh of the page: a row rebuilt on every refresh can vanish between
// a person's mousedown and mouseup on Remove (and did, under the test's pointer).
func (b *browser) keepsRow(node string) {
	b.t.Helper()
	row := fmt.Sprintf(`document.querySelector('table.blocklist tr[data-node=%q] button[data-unblock]')`, node)
	if !eval[bool](b, `(window.keptRow = `+row+`) !== null`) {
		b.fail("finding the row of "+node, fmt.Errorf("no row with a Remove button"))
	}
	b.refreshed()
	if !eval[bool](b, row+` === window.keptRow && window.keptRow.isConnected`) {
		b.t.Errorf("the blocklist's row of %s was rebuilt by a refresh of the page; want it kept while the node stays blocked", node)
	}
}

// markerJS is a JavaScript function: the timeline's marker of the last completed rescale
// whose change includes its argument ("cars 1→2"), or undefined.
const markerJS = `((change) => [...document.querySelectorAll('g.rescale-marker[data-outcome="COMPLETED"]')]
	.filter(g => g.dataset.change.includes(change)).pop())`

type blockedNode struct {
	Action       string `json:"action"`
	Cause        string `json:"cause"`
	EndTimestamp string `json:"endTimestamp"`
}

// blocklist reads GET /blocklist of the cluster's AM.
func blocklist(t *testing.T, c interface{ RESTAddress() string }) map[string]blockedNode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.RequestTimeout)
	defer cancel()
	code, _, body, err := testkit.Send(ctx, http.MethodGet, "http://"+c.RESTAddress()+"/blocklist", "")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /blocklist = %d %s: %v", code, body, err)
	}
	var out map[string]blockedNode
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET /blocklist: %s: %v", body, err)
	}
	return out
}
