// ccmemory dashboard actions. No inline script is allowed by the page's CSP; this file is it.
(function () {
  "use strict";
  var csrf = document.querySelector('meta[name="ccm-csrf"]').getAttribute("content");

  function flash(text, bad) {
    var el = document.getElementById("flash");
    el.textContent = text;
    el.className = bad ? "flash bad" : "flash";
    el.hidden = false;
  }

  function post(url) {
    return fetch(url, { method: "POST", headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); });
  }

  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof HTMLElement)) return;
    if (t.classList.contains("promote")) {
      var branch = t.getAttribute("data-branch");
      t.disabled = true;
      post("/api/promote?branch=" + encodeURIComponent(branch)).then(function (res) {
        if (res.ok) {
          var n = res.body.promoted_ids.length;
          flash("Promoted " + n + " memor" + (n === 1 ? "y" : "ies") + " from " + res.body.branch + " to " + res.body.main +
                (res.body.new_main ? " (commit " + res.body.new_main.slice(0, 12) + ")" : " (nothing to promote)"));
          document.body.setAttribute("data-promoted", res.body.new_main || "none");
        } else {
          flash(res.body.message || "promotion failed", true);
          document.body.setAttribute("data-promoted", "error");
          t.disabled = false;
        }
      });
    } else if (t.classList.contains("dismiss")) {
      var key = t.getAttribute("data-key");
      post("/api/dismiss?key=" + encodeURIComponent(key)).then(function (res) {
        if (res.ok) {
          var li = t.closest("li");
          if (li) li.remove();
          flash("Dismissed; it stays dismissed on this machine.");
        } else {
          flash(res.body.message || "dismiss failed", true);
        }
      });
    } else if (t.classList.contains("accept-suggestion") || t.classList.contains("dismiss-suggestion")) {
      var skey = t.getAttribute("data-key");
      var accepting = t.classList.contains("accept-suggestion");
      t.disabled = true;
      post("/api/suggestions/" + (accepting ? "accept" : "dismiss") + "?key=" + encodeURIComponent(skey)).then(function (res) {
        if (res.ok) {
          var item = t.closest("li.suggestion");
          if (item) item.remove();
          flash(accepting ? "Written: " + res.body.path + " (" + res.body.status + "); review and commit it." :
                "Dismissed; it stays dismissed on this machine.");
          document.body.setAttribute("data-suggestion", accepting ? res.body.path : "dismissed");
        } else {
          flash(res.body.message || "failed", true);
          document.body.setAttribute("data-suggestion", "error");
          t.disabled = false;
        }
      });
    } else if (t.classList.contains("copy")) {
      var cite = t.getAttribute("data-cite");
      var done = function () { flash("Copied " + cite); t.setAttribute("data-copied", cite); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(cite).then(done, function () { fallback(cite); done(); });
      } else { fallback(cite); done(); }
    }
  });

  // Live overview: re-read the JSON every data-poll seconds and update the figures in place (text
  // only, never HTML), so the reader keeps their place: no reload, no scroll jump.
  var live = document.getElementById("live");
  if (live) {
    var every = Math.max(1, parseFloat(live.getAttribute("data-poll")) || 30) * 1000;
    window.setInterval(function () {
      fetch(live.getAttribute("data-api"), { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (d) { update(d); setText(document.getElementById("live-status"), "updated " + new Date().toLocaleTimeString()); })
        .catch(function (e) { setText(document.getElementById("live-status"), "update failed: " + e.message); });
    }, every);
  }

  function setText(el, text) {
    if (el && el.textContent !== String(text)) el.textContent = String(text);
  }

  function setMetric(box, m) {
    if (!box || !m) return;
    var val = box.querySelector(".mval");
    setText(val, m.display);
    if (val) val.classList.toggle("na", m.value === null);
    setText(box.querySelector(".why"), m.why || "");
  }

  function update(d) {
    setText(document.getElementById("stat-memories"), d.stats.memories);
    Object.keys(d.stats.by_status).forEach(function (k) { setText(document.getElementById("stat-" + k), d.stats.by_status[k]); });
    setText(document.getElementById("stat-relations"), d.stats.relations);
    setText(document.getElementById("stat-invalid"), d.stats.invalid_files);
    document.querySelectorAll("#by-type td[data-type]").forEach(function (td) {
      setText(td, d.stats.by_type[td.getAttribute("data-type")] || 0);
    });
    Object.keys(d.metrics).forEach(function (k) { setMetric(document.getElementById("metric-" + k), d.metrics[k]); });
    Object.keys(d.seed_metrics).forEach(function (k) {
      var row = document.getElementById("seed-" + k);
      setMetric(row, d.seed_metrics[k]);
      var ours = row && row.querySelector("td.ours");
      var key = ours && ours.getAttribute("data-ours");
      if (key && d.metrics[key]) setText(ours, d.metrics[key].display);
    });
    var h = document.getElementById("hours-saved");
    if (h) { setText(h, d.hours_saved.display); h.classList.toggle("na", !d.hours_saved.shown); }
  }

  function fallback(text) {
    var ta = document.createElement("textarea");
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    try { document.execCommand("copy"); } catch (e) { /* the flash still shows the citation */ }
    ta.remove();
  }
})();
