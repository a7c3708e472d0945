"""The HTML report's style and script (issue 44, ADR 0022), inline: the page works
from ``file://`` with no network. The script reads the run's data from a JSON element
and sets every string as text (``textContent``): nothing from a server is markup or
code. A few dozen lines of plain JavaScript: a sortable, filterable table and a
repository's details (phases, files, tests, its tests over past runs).
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top}
th[data-key]{cursor:pointer;background:#f0f0f0}tbody tr:hover{background:#eef}
.num{text-align:right}.none{color:#777}code,.mono{font-family:ui-monospace,monospace}
svg text{font-size:11px}text.row{text-anchor:end}text.tick{text-anchor:middle;fill:#555}
.axis{stroke:#999}.limit{fill:none;stroke:#c00;stroke-width:1.5;stroke-dasharray:4 2}
.host-limit{fill:#c00}.memory-thrash{fill:#70c}.legend span{display:inline-block;margin-right:1em}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
#detail{border:1px solid #ccc;padding:.5em 1em;margin-top:1em}#detail:empty{display:none}
.charts{display:flex;flex-wrap:wrap;gap:2em}.status-failed,.status-timeout{color:#b00}
"""

SCRIPT = r"""
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("run-data").textContent);
  var cols = data.columns, count = cols.url.length, shown = 500;
  var sortKey = null, ascending = true;
  var body = document.getElementById("rows");
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function visibleRows() {
    var words = document.getElementById("filter").value.toLowerCase();
    var status = document.getElementById("status").value, rows = [];
    for (var i = 0; i < count; i++) {
      if (status && cols.status[i] !== status) continue;
      var hay = (cols.url[i] + " " + cols.kind[i] + " " + cols.message[i] + " " +
                 cols.frameworks[i]).toLowerCase();
      if (words && hay.indexOf(words) < 0) continue;
      rows.push(i);
    }
    if (sortKey) {
      var values = cols[sortKey], sign = ascending ? 1 : -1;
      rows.sort(function (a, b) {
        var x = values[a], y = values[b];
        if (x === y) return a - b;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * sign;
      });
    }
    return rows;
  }
  function render() {
    var rows = visibleRows(), keys = ["url", "status", "kind", "tests", "files",
      "frameworks", "wait", "clone", "analysis", "attempts"];
    body.textContent = "";
    rows.slice(0, shown).forEach(function (i) {
      var tr = el("tr");
      tr.dataset.row = i;
      keys.forEach(function (k) {
        var numeric = typeof cols[k][i] === "number";
        tr.appendChild(el("td", cols[k][i], (numeric ? "num " : "") + "status-" + cols.status[i]));
      });
      tr.addEventListener("click", function () { detail(i); });
      body.appendChild(tr);
    });
    document.getElementById("count").textContent = rows.length > shown ?
      "showing " + shown + " of " + rows.length + " repositories" : rows.length + " repositories";
    document.getElementById("more").hidden = rows.length <= shown;
  }
  function sparkline(history) {
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg");
    var tests = history.map(function (h) { return h[1] || 0; });
    var top = Math.max.apply(null, tests.concat([1])), w = 160, h = 30;
    svg.setAttribute("width", w); svg.setAttribute("height", h + 4);
    var line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", tests.map(function (t, n) {
      var x = n * w / Math.max(tests.length - 1, 1);
      return x.toFixed(1) + "," + (h + 2 - t / top * h).toFixed(1);
    }).join(" "));
    line.setAttribute("fill", "none"); line.setAttribute("stroke", "#3182bd");
    svg.appendChild(line);
    return svg;
  }
  function detail(i) {
    var box = document.getElementById("detail"), p = data.phases[i];
    box.textContent = "";
    try {
      window.history.replaceState(null, "", "#repo-" + i);
    } catch (e) { /* some browsers refuse it for file:// pages: the link is a nicety */ }
    box.appendChild(el("h3", cols.url[i], "mono"));
    var error = cols.kind[i] ? " (" + cols.kind[i] + "): " + cols.message[i] : "";
    box.appendChild(el("p", "status " + cols.status[i] + error));
    if (cols.branch[i]) {
      box.appendChild(el("p", "branch " + cols.branch[i] + " at commit " + cols.commit[i]));
    }
    var phases = el("table");
    phases.appendChild(el("caption", "phases: seconds from the run's start"));
    for (var n = 0; n < p.length; n += 4) {
      var tr = el("tr");
      tr.appendChild(el("td", data.phaseNames[p[n]] || "?"));
      tr.appendChild(el("td", p[n + 3] ? "attempt " + p[n + 3] : ""));
      tr.appendChild(el("td", (p[n + 1] / 1000).toFixed(3), "num"));
      tr.appendChild(el("td", "+" + (p[n + 2] / 1000).toFixed(3) + " s", "num"));
      phases.appendChild(tr);
    }
    box.appendChild(phases);
    var past = data.history[i];
    if (past.length > 1) {
      box.appendChild(el("p", "tests over " + past.length + " runs: " +
        past.map(function (h) {
          return "run " + h[0] + ": " + (h[1] === null ? h[2] : h[1]);
        }).join(", ")));
      box.appendChild(sparkline(past));
    }
    var inv = data.files[i];
    if (!inv) { box.appendChild(el("p", "no inventory stored", "none")); return; }
    inv.files.forEach(function (f) {
      var d = el("details");
      var counts = Object.keys(f[3]).map(function (s) { return s + " " + f[3][s]; });
      var head = f[0] + " \u2014 " + f[1] + ", " + f[2] + ": " + counts.join(", ");
      d.appendChild(el("summary", head));
      var ul = el("ul");
      f[4].forEach(function (t) { ul.appendChild(el("li", t[0] + " [" + t[1] + "]")); });
      d.appendChild(ul);
      box.appendChild(d);
    });
    if (inv.leftOut || inv.filesLeftOut || inv.errorsLeftOut) {
      box.appendChild(el("p", "left out (the page's size bound): " + inv.leftOut +
        " test names, " + inv.filesLeftOut + " files, " + inv.errorsLeftOut +
        " scan errors; clonegate export lists them", "none"));
    }
    inv.errors.forEach(function (e) {
      box.appendChild(el("p", "scan error: " + e[0] + ": " + e[1], "status-failed"));
    });
  }
  document.querySelectorAll("th[data-key]").forEach(function (th) {
    th.addEventListener("click", function () {
      ascending = sortKey === th.dataset.key ? !ascending : true;
      sortKey = th.dataset.key;
      render();
    });
  });
  document.getElementById("filter").addEventListener("input", render);
  document.getElementById("status").addEventListener("change", render);
  document.getElementById("more").addEventListener("click", function () {
    shown = count;
    render();
  });
  render();
  // #repo-N opens repository N's details: a link to one repository of the run.
  var linked = /^#repo-(\d+)$/.exec(location.hash);
  if (linked && Number(linked[1]) < count) detail(Number(linked[1]));
})();
"""
