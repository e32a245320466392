// Weir's web UI script. Pages work without it; it adds two things:
//
//  - live updates: an element with data-live="URL" is refreshed by polling
//    the URL with If-None-Match; a 200 with an ETag replaces its content,
//    a 304 (nothing changed) keeps it; while the user is filling in a form
//    inside it (a focused field, a ticked box) it waits;
//  - keyboard navigation of the grid: arrow keys move between cells
//    (Home/End to a row's ends), Enter opens the focused cell;
//  - a live log tail: a <pre data-tail="URL"> appends what the REST API's
//    log endpoint returns from its continuation token on, until the page's
//    head says the try is over ([data-try-over]);
//  - a session that ended (a poll redirected to the login page, or 401)
//    stops the updates and says so, rather than showing a frozen page.
//  Polls wait while the tab is hidden.
"use strict";
(function () {
  function live(el) {
    var url = el.getAttribute("data-live");
    var every = parseInt(el.getAttribute("data-live-every") || "2000", 10);
    var etag = el.getAttribute("data-etag") || "";
    function tick() {
      if (document.hidden) { setTimeout(tick, every); return; }
      fetch(url, { headers: etag ? { "If-None-Match": etag } : {}, credentials: "same-origin", redirect: "manual" })
        .then(function (r) {
          if (loggedOut(r)) { return "stop"; }
          var tag = r.headers.get("ETag");
          if (r.status !== 200 || !tag) { return; } // 304: nothing changed
          if (busy(el)) { return; } // keep the user's half-filled form; try again next time
          return r.text().then(function (html) {
            var f = document.activeElement, pos = f && f.dataset ? [f.dataset.r, f.dataset.c] : null;
            etag = tag;
            el.innerHTML = html;
            el.setAttribute("data-etag", tag);
            if (pos && pos[0] !== undefined) { focusCell(el, +pos[0], +pos[1]); }
          });
        })
        .catch(function () {})
        .then(function (stop) { if (stop !== "stop") { setTimeout(tick, every); } });
    }
    setTimeout(tick, every);
  }

  // loggedOut reports whether a poll's answer says the session ended, and
  // then says so on the page, once.
  function loggedOut(r) {
    if (r.type !== "opaqueredirect" && r.status !== 401) { return false; }
    if (!document.getElementById("session-ended")) {
      var p = document.createElement("p");
      p.id = "session-ended";
      p.className = "error";
      p.setAttribute("role", "alert");
      p.appendChild(document.createTextNode("Your session has ended: this page no longer updates. "));
      var a = document.createElement("a");
      a.href = "/login?next=" + encodeURIComponent(location.pathname + location.search);
      a.textContent = "Log in again";
      p.appendChild(a);
      var main = document.querySelector("main") || document.body;
      main.insertBefore(p, main.firstChild);
    }
    return true;
  }

  // tryOver reports whether the task-instance head says its try ended.
  function tryOver() { return !!document.querySelector("#tihead [data-try-over]"); }

  function busy(el) {
    var a = document.activeElement;
    if (a && el.contains(a) && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName)) { return true; }
    return !!el.querySelector("input[type=checkbox]:checked, details[open]");
  }

  function focusCell(root, r, c) {
    var cell = root.querySelector('a.cell[data-r="' + r + '"][data-c="' + c + '"]');
    if (cell) { cell.focus(); return true; }
    return false;
  }

  document.addEventListener("keydown", function (ev) {
    var a = ev.target;
    if (!a.classList || !a.classList.contains("cell")) { return; }
    var root = a.closest("[data-grid]"), r = +a.dataset.r, c = +a.dataset.c, last = root.querySelectorAll("thead th").length - 2;
    var moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (ev.key === "Home") { for (var i = 0; i <= last && !focusCell(root, r, i); i++) {} ev.preventDefault(); return; }
    if (ev.key === "End") { for (var j = last; j >= 0 && !focusCell(root, r, j); j--) {} ev.preventDefault(); return; }
    var m = moves[ev.key];
    if (!m) { return; }
    ev.preventDefault();
    // Skip cells without an instance until one is found.
    for (var n = 1; n < 200; n++) {
      var nr = r + m[0] * n, nc = c + m[1] * n;
      if (nr < 0 || nc < 0 || nc > last || !root.querySelector('a.cell[data-r="' + nr + '"], a.cell[data-c="' + nc + '"]')) { return; }
      if (focusCell(root, nr, nc)) { return; }
    }
  });

  function tail(pre) {
    var url = pre.getAttribute("data-tail");
    var first = true;
    function tick() {
      if (document.hidden) { setTimeout(tick, 2000); return; }
      var over = tryOver(); // read before the fetch: its answer then holds the try's last lines
      fetch(url, { headers: { Accept: "text/plain" }, credentials: "same-origin", redirect: "manual" })
        .then(function (r) {
          if (loggedOut(r)) { return "stop"; }
          if (r.status !== 200) { return; }
          var token = r.headers.get("Weir-Log-Continuation-Token");
          return r.text().then(function (text) {
            if (text) {
              var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
              if (first && pre.textContent === "(no log yet)") { pre.textContent = ""; }
              pre.appendChild(document.createTextNode(text));
              if (atEnd) { pre.scrollTop = pre.scrollHeight; }
            }
            first = false;
            if (token) { url = url.replace(/([?&]token=)\d+/, "$1" + token); }
            if (over && !text) {
              document.querySelectorAll(".live-note").forEach(function (n) { n.textContent = "(ended)"; });
              return "stop";
            }
          });
        })
        .catch(function () {})
        .then(function (stop) { if (stop !== "stop") { setTimeout(tick, 2000); } });
    }
    setTimeout(tick, 1000);
  }

  document.querySelectorAll("[data-live]").forEach(live);
  document.querySelectorAll("pre[data-tail]").forEach(tail);
})();
