// Interactive memory graph on a canvas: positions come from the server (/api/graph), this
// file only draws, pans, zooms and picks. Thousands of nodes stay smooth: no DOM per node.
(function () {
  "use strict";
  var canvas = document.getElementById("graph");
  var tip = document.getElementById("tip");
  var info = document.getElementById("graph-info");
  var ctx = canvas.getContext("2d");
  var colors = { decision: "#1f77b4", correction: "#d62728", exception: "#ff7f0e", insight: "#2ca02c",
    question: "#9467bd", failed_approach: "#8c564b", fact: "#17becf", reference: "#7f7f7f",
    gotcha: "#e377c2", preference: "#bcbd22", pattern: "#393b79" };
  var nodes = [], edges = [], byId = {};
  var scale = 0.7, ox = 60, oy = 10, drag = null, moved = false;
  var topic = canvas.getAttribute("data-topic");
  var url = "/api/graph" + (topic ? "?topic=" + encodeURIComponent(topic) : "");

  fetch(url, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (g) {
    nodes = g.nodes; edges = g.edges;
    nodes.forEach(function (n) { byId[n.id] = n; });
    info.textContent = nodes.length + " memories, " + edges.length + " relations" +
      (g.truncated ? " (truncated; pick a topic to see a neighbourhood)" : "") + ".";
    canvas.setAttribute("data-nodes", String(nodes.length));
    draw();
  });

  function sx(n) { return n.x * scale + ox; }
  function sy(n) { return n.y * scale + oy; }

  function draw() {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.strokeStyle = "rgba(90,100,120,0.25)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    edges.forEach(function (e) {
      var a = byId[e.src], b = byId[e.dst];
      if (!a || !b) return;
      ctx.moveTo(sx(a), sy(a)); ctx.lineTo(sx(b), sy(b));
    });
    ctx.stroke();
    var r = Math.max(2.5, 4.5 * scale);
    nodes.forEach(function (n) {
      ctx.fillStyle = colors[n.type] || "#333";
      ctx.globalAlpha = n.superseded ? 0.35 : 1;
      ctx.beginPath(); ctx.arc(sx(n), sy(n), r, 0, 6.283); ctx.fill();
    });
    ctx.globalAlpha = 1;
    // topic labels at the centre of each neighbourhood, biggest first
    var groups = {};
    nodes.forEach(function (n) {
      var g = groups[n.topic] || (groups[n.topic] = { x: 0, y: 0, n: 0 });
      g.x += n.x; g.y += n.y; g.n += 1;
    });
    var names = Object.keys(groups).filter(function (k) { return k; })
      .sort(function (a, b) { return groups[b].n - groups[a].n; }).slice(0, 60);
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillStyle = "#23303f";
    ctx.textAlign = "center";
    names.forEach(function (k) {
      var g = groups[k];
      ctx.fillText(k, (g.x / g.n) * scale + ox, (g.y / g.n) * scale + oy - 10);
    });
  }

  function pick(ev) {
    var rect = canvas.getBoundingClientRect();
    var x = (ev.clientX - rect.left) * canvas.width / rect.width;
    var y = (ev.clientY - rect.top) * canvas.height / rect.height;
    var best = null, bd = 64;
    nodes.forEach(function (n) {
      var d = (sx(n) - x) * (sx(n) - x) + (sy(n) - y) * (sy(n) - y);
      if (d < bd) { bd = d; best = n; }
    });
    return best;
  }

  canvas.addEventListener("mousedown", function (ev) { drag = [ev.clientX, ev.clientY]; moved = false; });
  window.addEventListener("mouseup", function () { drag = null; });
  canvas.addEventListener("mousemove", function (ev) {
    if (drag) {
      ox += ev.clientX - drag[0]; oy += ev.clientY - drag[1];
      if (Math.abs(ev.clientX - drag[0]) + Math.abs(ev.clientY - drag[1]) > 2) moved = true;
      drag = [ev.clientX, ev.clientY]; draw(); return;
    }
    var n = pick(ev);
    if (n) {
      tip.textContent = "[" + n.type + "] " + n.title + (n.topic ? " · " + n.topic : "");
      tip.style.left = (ev.offsetX + 12) + "px"; tip.style.top = (ev.offsetY + 12) + "px";
      tip.hidden = false;
    } else { tip.hidden = true; }
  });
  canvas.addEventListener("click", function (ev) {
    if (moved) return;
    var n = pick(ev);
    if (n) window.location.href = "/memory/" + encodeURIComponent(n.id);
  });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = canvas.getBoundingClientRect();
    var x = (ev.clientX - rect.left) * canvas.width / rect.width;
    var y = (ev.clientY - rect.top) * canvas.height / rect.height;
    var f = ev.deltaY < 0 ? 1.2 : 1 / 1.2;
    ox = x - (x - ox) * f; oy = y - (y - oy) * f; scale *= f; draw();
  }, { passive: false });
})();
