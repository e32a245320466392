package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// chromiumPath is where Debian's chromium package (installed by .ci/run)
// puts the browser.
const chromiumPath = "/usr/bin/chromium"

// TestUIInBrowser drives the web UI of a real `weir standalone` (SQLite,
// the example DAGs) in headless Chromium, as a person would: log in, see
// the DAGs, trigger hello with a conf from its form, watch the grid turn
// green without a reload, open the log, set, edit and delete a task-state
// key and find each in the audit log, view an asset's events, set its
// state and materialize it; a viewer finds no edit controls and is refused when it posts
// anyway, and a post without the CSRF token is refused. Accessibility:
// the grid is walked with the keyboard, and on every page every control
// has a label and every state an icon or word besides its colour.
//
// With WEIR_UI_SCREENSHOTS=1 it writes the screenshots of the main pages
// to docs/images/ (reviewed and committed); otherwise to a temp folder.
// Without Chromium it skips, unless WEIR_REQUIRE_CHROMIUM=1 (set in CI).
func TestUIInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("WEIR_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium is required (WEIR_REQUIRE_CHROMIUM=1) but %s is missing: apt-get install -y chromium", chromiumPath)
		}
		t.Skipf("no %s (apt-get install -y chromium)", chromiumPath)
	}
	home := t.TempDir()
	sa := weirtest.StartStandalone(t, weirBin, home, examplesDir())
	base := sa.API.Base()
	password := strings.TrimSpace(weirtest.ReadFile(t, filepath.Join(home, "secrets", "admin_password")))
	out, err := exec.Command(weirBin, "users", "create", "--home", home, "--username", "vera", "--password", "vera-pw", "--role", "viewer").CombinedOutput() //nolint:gosec // the test's own binary
	if err != nil {
		t.Fatalf("create viewer: %v\n%s", err, out)
	}
	shots := t.TempDir()
	if os.Getenv("WEIR_UI_SCREENSHOTS") == "1" {
		shots = filepath.Join(repoRoot, "docs", "images")
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	b := &uiBrowser{t: t, ctx: ctx, base: base, shots: shots}

	// Log in, and see the example DAGs.
	b.run("open the DAGs page (redirected to log in)", chromedp.Navigate(base+"/dags"), chromedp.WaitVisible(chromedp.CSS(`#username`)))
	b.login("admin", password)
	b.waitText("the DAGs list", `table.dags`, "hello")
	b.shot("dags.png")

	// Trigger hello with a conf from its form.
	b.run("open hello's trigger form", chromedp.Navigate(base+"/dags/hello/trigger"), chromedp.WaitVisible(chromedp.CSS(`#param-name`)))
	b.run("fill in the form and trigger",
		chromedp.SetValue(chromedp.CSS(`#param-name`), "Browser"), chromedp.SetValue(chromedp.CSS(`#run_id`), "from_browser"),
		chromedp.Click(chromedp.CSS(`button.primary`)), chromedp.WaitVisible(chromedp.CSS(`h1 .badge`)))

	// Watch the grid turn green without reloading.
	b.run("open hello's grid", chromedp.Navigate(base+"/dags/hello"), chromedp.WaitVisible(chromedp.CSS(`table.grid`)),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.weirSamePage = true`)(ctx, t)
			return err
		}))
	b.run("wait for the run's cells to turn success in place",
		chromedp.WaitVisible(chromedp.CSS(`a.cell[aria-label="greet in from_browser: success"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a.cell[aria-label="done in from_browser: success"]`)))
	if !value[bool](b, "check the page was not reloaded", chromedp.Evaluate[bool](`window.weirSamePage === true`)) {
		t.Fatal("the grid turned green by a reload, not by a live update")
	}
	b.shot("grid.png")
	b.run("open the graph", chromedp.Navigate(base+"/dags/hello/graph"), chromedp.WaitVisible(chromedp.CSS(`svg.graph`)))
	// A node is filled in its state's colour (a rule for every node once
	// outranked them: every node was white).
	if fill := value[string](b, "read a successful task's fill", chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector("svg.graph .n-success rect")).fill`)); fill != "rgb(212, 237, 218)" {
		t.Errorf("a successful task's node is filled %s, want the success colour rgb(212, 237, 218)", fill)
	}
	b.shot("graph.png")
	b.run("open the run", chromedp.Navigate(base+"/dags/hello/runs/from_browser"), chromedp.WaitVisible(chromedp.CSS(`svg.gantt`)))
	b.waitText("the run's conf", `pre`, `"name": "Browser"`)
	b.shot("run.png")
	b.run("list hello's successful runs", chromedp.Navigate(base+"/dags/hello/runs?state=success"), chromedp.WaitVisible(chromedp.CSS(`table.runs`)))
	b.waitText("the triggered run in the filtered list", `table.runs`, "from_browser")

	// Walk the grid with the keyboard (a second run gives it two columns).
	sa.API.Trigger("hello", "second", nil)
	sa.API.WaitRunSuccess("hello", "second")
	b.run("open hello's grid with two runs", chromedp.Navigate(base+"/dags/hello"),
		chromedp.WaitVisible(chromedp.CSS(`a.cell[aria-label="done in second: success"]`)))
	b.checkGridKeyboard()

	// Open the log from the grid (keyboard: focus a cell, Enter).
	b.run("open greet's log from the grid", chromedp.Navigate(base+"/dags/hello"), chromedp.WaitVisible(chromedp.CSS(`table.grid`)),
		chromedp.Focus(chromedp.CSS(`a.cell[aria-label="greet in from_browser: success"]`)), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`pre.log`)))
	b.waitText("greet's log", `pre.log`, "Hello, Browser!")

	// Set, then delete, a task-state key; both are in the audit log.
	b.run("set a task-state key", chromedp.Click(chromedp.CSS(`details.add summary`)), chromedp.SetValue(chromedp.CSS(`#new-key`), "cursor"),
		chromedp.SetValue(chromedp.CSS(`#new-value`), `{"offset": 42}`), chromedp.Click(chromedp.CSS(`details.add button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.state`)))
	b.waitText("the task state panel", `table.state`, `"offset": 42`)
	b.run("edit the key", chromedp.Click(chromedp.CSS(`table.state details summary`)), chromedp.SetValue(chromedp.CSS(`#value-cursor`), `{"offset": 43}`),
		chromedp.Click(chromedp.CSS(`table.state details button[type=submit]`)), chromedp.WaitNotPresent(chromedp.CSS(`table.state details[open]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.state`)))
	b.waitText("the edited value", `table.state`, `"offset": 43`)
	b.shot("task-instance.png")
	b.run("delete the key", chromedp.Click(chromedp.CSS(`button[aria-label="Delete key cursor"]`)), chromedp.WaitNotPresent(chromedp.CSS(`table.state`)))
	// Mark greet failed with its downstream task: the page lists what
	// changes first, again with the option ticked, then marks both.
	b.run("mark greet failed", chromedp.Click(`//form[contains(@action,"/mark")]//button[normalize-space()="Mark failed"]`),
		chromedp.WaitVisible(chromedp.CSS(`input[name=future]`)))
	b.waitText("the mark's confirmation", `h1`, "Mark 1 task instance as failed?")
	b.run("list again with the downstream tasks", chromedp.Click(chromedp.CSS(`input[name=downstream]`)),
		chromedp.Click(`//button[normalize-space()="List again"]`), chromedp.WaitVisible(`//table[@class="list"]//th[normalize-space()="done"]`))
	b.waitText("the mark's confirmation with done", `h1`, "Mark 2 task instances as failed?")
	b.run("confirm the mark", chromedp.Click(chromedp.CSS(`button.primary`)), chromedp.WaitVisible(chromedp.CSS(`pre.log`)),
		chromedp.Navigate(base+"/dags/hello/runs/from_browser"), chromedp.WaitVisible(chromedp.CSS(`#task-done`)))
	b.waitText("done marked failed on the run page", `#task-done`, "failed")
	b.run("open the audit log", chromedp.Navigate(base+"/audit?action=task_state.delete"), chromedp.WaitVisible(chromedp.CSS(`table.audit`)))
	b.waitText("the audit entry of the delete", `table.audit`, "key=cursor")
	b.run("open the audit log of sets", chromedp.Navigate(base+"/audit?action=task_state.set"), chromedp.WaitVisible(chromedp.CSS(`table.audit`)))
	if n := value[int](b, "count the set entries", chromedp.Evaluate[int](`document.querySelectorAll("table.audit tbody tr").length`)); n != 2 {
		t.Errorf("the audit log has %d task_state.set entries, want 2 (the set and the edit)", n)
	}

	// An asset's events and state.
	sa.API.Trigger("asset_producer", "make_orders", nil)
	sa.API.WaitRunSuccess("asset_producer", "make_orders")
	b.run("open the orders asset", chromedp.Navigate(base+"/assets?q=orders"), chromedp.WaitVisible(chromedp.CSS(`table.list`)),
		// orders exactly (landed_orders, watched by an example, also matches the search)
		chromedp.Click(chromedp.Search(`//table[contains(@class, "list")]//th/a[text()="orders"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#state-title`)))
	b.waitText("the asset's event", `main`, "asset_producer")
	b.run("set the asset's state", chromedp.Click(chromedp.CSS(`details.add summary`)), chromedp.SetValue(chromedp.CSS(`#new-key`), "watermark"),
		chromedp.SetValue(chromedp.CSS(`#new-value`), `"2026-12-01"`), chromedp.Click(chromedp.CSS(`details.add button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.state`)))
	b.waitText("the asset state panel", `table.state`, "watermark")
	b.shot("asset.png")
	b.run("open the asset graph from the asset", chromedp.Click(chromedp.CSS(`a[href^="/assets/graph?q="]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg.assetgraph`)))
	b.waitText("asset_producer producing orders in the graph", `svg.assetgraph`, "asset_producer")
	b.shot("asset-graph.png")
	// Materialize: orders' one producing DAG runs, and its run page opens.
	b.run("back to orders", chromedp.Navigate(base+"/assets?q=orders"), chromedp.WaitVisible(chromedp.CSS(`table.list`)),
		chromedp.Click(chromedp.Search(`//table[contains(@class, "list")]//th/a[text()="orders"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#state-title`)))
	b.waitText("orders' Materialize button", `dl.facts`, "Materialize")
	b.run("materialize orders", chromedp.Click(`//button[normalize-space()="Materialize"]`), chromedp.WaitVisible(chromedp.CSS(`#task-load_orders`)))
	b.waitText("the materialized run of asset_producer", `h1`, "manual__")

	// A run's callbacks: ops_failing_load fails, firing its retry's and its
	// failure's command callbacks and the run's asset_event notifier; the
	// run page lists each with its state and attempts and links its log.
	sa.API.Trigger("ops_failing_load", "fails", map[string]any{"fail": true})
	sa.API.WaitRunDone("ops_failing_load", "fails")
	weirtest.WaitFor(t, "ops_failing_load's three callbacks to succeed", func() (bool, string) {
		var page api.CallbackCollection
		sa.API.Get("/api/v2/dags/ops_failing_load/dagRuns/fails/callbacks", &page)
		done := 0
		for _, cb := range page.Callbacks {
			if cb.State == core.CallbackSuccess {
				done++
			}
		}
		return done == 3, fmt.Sprintf("%+v", page.Callbacks)
	})
	b.run("open the failed run", chromedp.Navigate(base+"/dags/ops_failing_load/runs/fails"), chromedp.WaitVisible(chromedp.CSS(`#callbacks`)))
	b.waitText("the retry's callback", `#callbacks`, "on_retry")
	b.waitText("the run's notifier", `#callbacks`, "notifier asset_event")
	if n := value[int](b, "count the callbacks shown as succeeded", chromedp.Evaluate[int](
		`document.querySelectorAll("#callbacks tbody tr .s-success").length`)); n != 3 {
		t.Errorf("the run page shows %d succeeded callbacks, want 3", n)
	}
	b.checkAccessible("the run's callbacks")
	b.shot("run-callbacks.png")
	// Its page shows the callback's log beside the log of the try that
	// fired it, which links to the try's page.
	b.run("open the retry callback's page", chromedp.Click(chromedp.CSS(`#callbacks tbody tr:first-child a[aria-label^="Log of callback"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#callback-log`)))
	b.waitText("the retry callback's log", `#callback-log`, "load failed try 1 of run fails; retrying")
	b.waitText("the failed try's log beside it", `#try-log`, "loading")
	b.checkAccessible("the callback's page")
	b.shot("callback.png")
	b.run("open the try from the callback's page", chromedp.Click(chromedp.CSS(`#try-log-title a`)), chromedp.WaitVisible(chromedp.CSS(`pre.log`)))
	b.waitText("the try's page", `h2#log`, "Log of try 1")

	// Every control of every page has a label, and no state is shown by
	// colour alone (as the admin, who sees every control).
	b.visitAccessible("/dags", "/dags/hello", "/dags/hello/graph", "/dags/hello/durations", "/dags/hello/runs",
		"/dags/hello/source", "/dags/hello/trigger", "/dags/hello/runs/from_browser", "/dags/hello/runs/from_browser/tasks/greet",
		"/dags/hello/runs/from_browser/tasks/greet/rendered", "/assets", "/assets/graph", "/audit", "/admin", "/admin/config")
	b.run("open the admin page", chromedp.Navigate(base+"/admin"), chromedp.WaitVisible(chromedp.CSS(`table.health`)))
	b.waitText("the scheduler's health", `table.health`, "healthy")
	b.shot("admin.png")
	b.run("open the orders asset again", chromedp.Navigate(base+"/assets?q=orders"), chromedp.WaitVisible(chromedp.CSS(`table.list`)),
		chromedp.Click(chromedp.Search(`//table[contains(@class, "list")]//th/a[text()="orders"]`)), chromedp.WaitVisible(chromedp.CSS(`#state-title`)))
	b.checkAccessible("the orders asset")
	b.checkTheChecks()

	// A post without the CSRF token is refused.
	if status := b.post("/dags/hello/paused", url.Values{"paused": {"true"}}); status != 403 {
		t.Errorf("pause without a CSRF token: status %d, want 403", status)
	}

	// A viewer sees no edit controls and is refused when it posts anyway.
	b.run("log out", chromedp.Click(chromedp.CSS(`header form button`)), chromedp.WaitVisible(chromedp.CSS(`#username`)))
	b.login("vera", "vera-pw")
	b.run("open the task instance as the viewer", chromedp.Navigate(base+"/dags/hello/runs/from_browser/tasks/greet"),
		chromedp.WaitVisible(chromedp.CSS(`pre.log`)))
	controls := value[int](b, "count edit controls",
		chromedp.Evaluate[int](`document.querySelectorAll('details.add, form[action$="/mark"], form[action$="/clear"]').length`))
	if controls != 0 {
		t.Errorf("the viewer's task-instance page has %d edit controls, want none", controls)
	}
	token := value[string](b, "read the viewer's CSRF token", chromedp.Evaluate[string](`document.querySelector('input[name=csrf]').value`))
	if status := b.post("/dags/hello/paused", url.Values{"paused": {"true"}, "csrf": {token}}); status != 403 {
		t.Errorf("viewer pause with its CSRF token: status %d, want 403", status)
	}
	// A live page whose session ends says so instead of freezing: the
	// viewer's session cookie goes, and the grid's next poll is answered
	// by the login page.
	b.run("open hello's grid as the viewer", chromedp.Navigate(base+"/dags/hello"), chromedp.WaitVisible(chromedp.CSS(`table.grid`)))
	b.run("end the session", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCookies, cdp.Empty{})
		return err
	}))
	b.waitText("the page saying the session ended", `#session-ended`, "Your session has ended")
	// The browser's logout ended every admin session, the test client's
	// too (docs/security.md#revocation): it logs in again.
	if weirtest.Login(t, base, "admin", password).WaitDAG("hello").IsPaused {
		t.Error("a refused post paused hello")
	}
}

// uiBrowser is one Chromium tab on the UI.
type uiBrowser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

// run runs actions, failing the test with what was being done.
func (b *uiBrowser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.fail(what, err)
	}
}

// value runs an action that returns a value.
func value[T any](b *uiBrowser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.fail(what, err)
	}
	return v
}

// fail stops the test with what was being done and the page's main part.
func (b *uiBrowser) fail(what string, err error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	page, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS(`main`)))
	b.t.Fatalf("%s: %v\npage:\n%s", what, err, page)
}

// login fills the login form.
func (b *uiBrowser) login(user, password string) {
	b.t.Helper()
	b.run("log in as "+user, chromedp.WaitVisible(chromedp.CSS(`#username`)), chromedp.SetValue(chromedp.CSS(`#username`), user),
		chromedp.SetValue(chromedp.CSS(`#password`), password), chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`header .who`)))
}

// waitText waits until the element sel contains text.
func (b *uiBrowser) waitText(what, sel, text string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, text)
	value[bool](b, "see "+what, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(60*time.Second)))
}

// post submits a form from the page with fetch and returns the status.
func (b *uiBrowser) post(path string, form url.Values) int {
	b.t.Helper()
	js := fmt.Sprintf(`fetch(%q, {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: %q, redirect: "manual"}).then(r => r.status)`,
		path, form.Encode())
	return value[int](b, "post "+path, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
}

// shot saves a screenshot of the whole page.
func (b *uiBrowser) shot(name string) {
	b.t.Helper()
	png := value[[]byte](b, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(b.shots, name), png, 0o644); err != nil { //nolint:gosec // a picture for the docs
		b.t.Fatal(err)
	}
}
