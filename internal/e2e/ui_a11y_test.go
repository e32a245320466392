package e2e

import (
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// unlabelledJS lists the page's controls a screen reader could not name:
// a visible-type input, select or textarea with no <label for>, no
// enclosing label, no aria-label(ledby) and no title; a button or link
// with neither text nor aria-label.
const unlabelledJS = `(() => {
  const named = (el) => (el.getAttribute("aria-label") || "").trim() !== "" || !!el.getAttribute("aria-labelledby") ||
    (el.getAttribute("title") || "").trim() !== "";
  const out = [];
  document.querySelectorAll("input, select, textarea").forEach((el) => {
    if (el.type === "hidden") { return; }
    const byFor = el.id && document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
    if (!byFor && !el.closest("label") && !named(el)) { out.push(el.outerHTML.slice(0, 120)); }
  });
  document.querySelectorAll("button, a[href], summary").forEach((el) => {
    if (el.textContent.trim() === "" && !named(el)) { out.push(el.outerHTML.slice(0, 120)); }
  });
  return out;
})()`

// colourOnlyJS lists state marks that carry their state by colour alone:
// a square or badge (class s-<state>) without a text icon or word, or a
// grid cell without the state in its accessible name.
const colourOnlyJS = `(() => {
  const out = [];
  document.querySelectorAll(".sq, .badge").forEach((el) => {
    if (el.textContent.trim() === "") { out.push(el.outerHTML.slice(0, 120)); }
  });
  document.querySelectorAll("a.cell").forEach((el) => {
    if (!/: [a-z ]+/.test(el.getAttribute("aria-label") || "")) { out.push(el.outerHTML.slice(0, 120)); }
  });
  return out;
})()`

// checkAccessible fails the test with every control of the current page
// that has no label, and every state shown by colour alone.
func (b *uiBrowser) checkAccessible(page string) {
	b.t.Helper()
	if bad := value[[]string](b, "list unlabelled controls on "+page, chromedp.Evaluate[[]string](unlabelledJS)); len(bad) > 0 {
		b.t.Errorf("%s: %d controls without a label:\n%s", page, len(bad), strings.Join(bad, "\n"))
	}
	if bad := value[[]string](b, "list colour-only states on "+page, chromedp.Evaluate[[]string](colourOnlyJS)); len(bad) > 0 {
		b.t.Errorf("%s: %d states shown by colour alone:\n%s", page, len(bad), strings.Join(bad, "\n"))
	}
}

// visitAccessible opens each page and checks it (checkAccessible).
func (b *uiBrowser) visitAccessible(pages ...string) {
	b.t.Helper()
	for _, p := range pages {
		b.run("open "+p, chromedp.Navigate(b.base+p), chromedp.WaitVisible(chromedp.CSS(`main`)))
		b.checkAccessible(p)
	}
}

// focused is the grid position (row, column) of the focused cell, or
// "none".
func (b *uiBrowser) focused() string {
	b.t.Helper()
	return value[string](b, "read the focused cell", chromedp.Evaluate[string](
		`(() => { const a = document.activeElement; return a && a.classList.contains("cell") ? a.dataset.r + "," + a.dataset.c : "none"; })()`))
}

// key presses one key on the focused element.
func (b *uiBrowser) key(k string) {
	b.t.Helper()
	b.run("press "+k, chromedp.KeyEvent(k))
}

// checkGridKeyboard walks the grid of the page (at least two runs and
// two tasks, every cell filled) with the keyboard from the newest run's
// first cell: the arrows move between cells, Home and End to a row's
// ends, and moving past the grid's edge stays put.
func (b *uiBrowser) checkGridKeyboard() {
	b.t.Helper()
	cols := value[int](b, "count the grid's runs", chromedp.Evaluate[int](`document.querySelectorAll("table.grid thead th.run").length`))
	if cols < 2 {
		b.t.Fatalf("the grid has %d runs, want at least 2 to walk", cols)
	}
	last := cols - 1
	b.run("focus the newest run's first cell", chromedp.Focus(chromedp.CSS(fmt.Sprintf(`a.cell[data-r="0"][data-c="%d"]`, last))))
	for _, step := range []struct{ key, want string }{
		{kb.ArrowLeft, fmt.Sprintf("0,%d", last-1)},
		{kb.ArrowDown, fmt.Sprintf("1,%d", last-1)},
		{kb.ArrowRight, fmt.Sprintf("1,%d", last)},
		{kb.ArrowRight, fmt.Sprintf("1,%d", last)}, // the row's end: stays
		{kb.ArrowUp, fmt.Sprintf("0,%d", last)},
		{kb.Home, "0,0"},
		{kb.End, fmt.Sprintf("0,%d", last)},
		{kb.ArrowUp, fmt.Sprintf("0,%d", last)}, // the top row: stays
	} {
		b.key(step.key)
		if got := b.focused(); got != step.want {
			b.t.Errorf("after %q the focused cell is %s, want %s", step.key, got, step.want)
		}
	}
}

// checkTheChecks makes sure the DOM checks can fail: an input without a
// label and a colourless empty state square added to the page are found.
func (b *uiBrowser) checkTheChecks() {
	b.t.Helper()
	b.run("add an unlabelled input and an empty square", chromedp.Evaluate[chromedp.Void](
		`document.querySelector("main").insertAdjacentHTML("beforeend", '<input id="nolabel"><span class="sq s-failed"></span>')`))
	if bad := value[[]string](b, "list unlabelled controls", chromedp.Evaluate[[]string](unlabelledJS)); len(bad) != 1 || !strings.Contains(bad[0], "nolabel") {
		b.t.Errorf("the label check found %q, want the one unlabelled input", bad)
	}
	if bad := value[[]string](b, "list colour-only states", chromedp.Evaluate[[]string](colourOnlyJS)); len(bad) != 1 {
		b.t.Errorf("the colour check found %q, want the one empty square", bad)
	}
}
