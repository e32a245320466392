// Weir's web UI script. Pages work without it; it only adds live updates
// to elements that ask for them (data-live="URL"): it polls the URL with
// If-None-Match and swaps the element's content when the server answers
// with a new version (200), keeping it when nothing changed (304).
"use strict";
(function () {
  function live(el) {
    var url = el.getAttribute("data-live");
    var every = parseInt(el.getAttribute("data-live-every") || "3000", 10);
    var etag = el.getAttribute("data-etag") || "";
    function tick() {
      if (document.hidden) { setTimeout(tick, every); return; }
      fetch(url, { headers: etag ? { "If-None-Match": etag } : {}, credentials: "same-origin" })
        .then(function (r) {
          if (r.status === 200) {
            etag = r.headers.get("ETag") || "";
            return r.text().then(function (html) {
              var focused = document.activeElement && document.activeElement.id;
              el.innerHTML = html;
              if (focused) { var f = document.getElementById(focused); if (f) f.focus(); }
              el.dispatchEvent(new CustomEvent("weir:updated", { bubbles: true }));
            });
          }
        })
        .catch(function () {})
        .then(function () { setTimeout(tick, every); });
    }
    setTimeout(tick, every);
  }
  document.querySelectorAll("[data-live]").forEach(live);
})();
