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
    } else if (t.classList.contains("copy")) {
      var cite = t.getAttribute("data-cite");
      var done = function () { flash("Copied " + cite); t.setAttribute("data-copied", cite); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(cite).then(done, function () { fallback(cite); done(); });
      } else { fallback(cite); done(); }
    }
  });

  function fallback(text) {
    var ta = document.createElement("textarea");
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    try { document.execCommand("copy"); } catch (e) { /* the flash still shows the citation */ }
    ta.remove();
  }
})();
