"""The self-contained HTML page of a traced search: the SVG tree, unfolding on click.

The page draws the tree as bots.trace.draw does (the layout of bots.trace.layout, the same
shapes and style), from the nodes embedded as JSON; a click on a node unfolds or folds its
subtree (inline script and style, nothing fetched). Pure text in, text out.
"""

from __future__ import annotations

import json
from html import escape
from typing import Final

from bots.trace.draw import STYLE
from bots.trace.labels import format_value, has_window, headings, node_value
from bots.trace.layout import principal_path, unfolded, x_step
from bots.trace.model import Trace, json_number

HTML_BUDGET: Final = 40
"""Nodes the HTML page shows unfolded at first; the rest unfold on click."""


KIND_CODES: Final = {"inner": "i", "leaf": "l", "terminal": "t", "table": "b"}


def compact_nodes(trace: Trace) -> list[list[object]]:
    """Return the nodes as short rows for the page's script (see SCRIPT for the fields)."""
    return [
        [
            node.parent,
            node.move,
            1 if node.side == "max" else 0,
            node_value(trace, node),
            format_value(node.alpha),
            format_value(node.beta),
            KIND_CODES[node.kind],
            1 if node.cutoff else 0,
            node.pruned,
            node.children,
            1 if node.tt_hit else 0,
            node.position,
            format_value(node.alpha_out),
            format_value(node.beta_out),
        ]
        for node in trace.nodes
    ]


SCRIPT: Final = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  // Rows: parent, move, max?, value, alpha, beta, kind, cutoff?, pruned, children, tt hit?,
  // position, alpha on return, beta on return.
  var N = data.nodes, X = data.step, Y = 96, MX = 70, TOP = 40, S = 17, STUBS = 3;
  var NS = "http://www.w3.org/2000/svg";
  var opened = new Set(data.opened), pv = new Set(data.pv);
  var sizes = new Array(N.length).fill(1);
  for (var i = N.length - 1; i > 0; i--) sizes[N[i][0]] += sizes[i];
  var svg = document.getElementById("tree"), info = document.getElementById("info");
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function place() {
    var items = [], next = 0;
    function visit(i, parent, ply) {
      var n = N[i], item = {i: i, y: TOP + ply * Y, parent: parent, x: 0}, xs = [];
      items.push(item);
      var me = items.length - 1;
      if (opened.has(i)) n[9].forEach(function (c) { xs.push(visit(c, me, ply + 1)); });
      else if (n[9].length) item.folded = sizes[i] - 1;
      if (n[8].length && (opened.has(i) || !n[9].length)) {
        var moves = n[8], labels = moves.length <= STUBS ? moves :
          moves.slice(0, STUBS - 1).concat(["+" + (moves.length - STUBS + 1)]);
        labels.forEach(function (label) {
          var stub = {stub: label, x: MX + next * X, y: item.y + Y * 0.72, parent: me};
          items.push(stub); xs.push(stub.x); next += 0.8;
        });
      }
      if (xs.length) item.x = (xs[0] + xs[xs.length - 1]) / 2;
      else { item.x = MX + next * X; next += 1; }
      return item.x;
    }
    visit(0, null, 0);
    return items;
  }
  function fmtShape(n, x, y) {
    if (n[6] !== "i") return el("rect", {x: x - S + 3, y: y - S + 5, width: 2 * S - 6,
      height: 2 * S - 10, rx: 2});
    var p = n[2] ? [[x, y - S], [x + S * 1.15, y + S * 0.75], [x - S * 1.15, y + S * 0.75]]
                 : [[x, y + S], [x + S * 1.15, y - S * 0.75], [x - S * 1.15, y - S * 0.75]];
    return el("polygon", {points: p.map(function (q) { return q.join(","); }).join(" ")});
  }
  function show(i) {
    var n = N[i], kinds = {i: "inner", l: "leaf", t: "terminal", b: "table"};
    var rows = [["node", "#" + i + " " + (n[2] ? "MAX" : "MIN") + ", " + kinds[n[6]]],
      ["move", n[1] === null ? "(root)" : n[1]], ["position", n[11]], ["value", n[3]]];
    if (data.window) {
      rows.push(["window on entry", "\u27e8" + n[4] + ", " + n[5] + "\u27e9"]);
      rows.push(["window on return", "[" + n[12] + ", " + n[13] + "]"]);
    }
    if (n[7]) rows.push(["cut-off", "never searched: " + (n[8].join(" ") || "-")]);
    if (n[10]) rows.push(["table", n[6] === "b" ? "hit: the entry ended the node" : "hit"]);
    if (n[9].length) rows.push(["subtree", sizes[i] + " nodes" +
      (opened.has(i) ? "" : " (folded: click the node to unfold)")]);
    info.replaceChildren();
    rows.forEach(function (r) {
      var dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = r[0]; dd.textContent = r[1]; info.append(dt, dd);
    });
  }
  function draw() {
    var items = place(), width = 0, height = 0, levels = {};
    svg.replaceChildren();
    items.forEach(function (it) {
      width = Math.max(width, it.x + MX); height = Math.max(height, it.y + Y * 0.6);
      if (it.i !== undefined && !(it.y in levels)) levels[it.y] = N[it.i][2];
    });
    svg.setAttribute("width", width); svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    Object.keys(levels).forEach(function (y) {
      svg.append(el("text", {"class": "level", x: 6, y: +y + 4}, levels[y] ? "MAX" : "MIN"));
    });
    items.forEach(function (it) {
      if (it.parent === null) return;
      var up = items[it.parent], x1 = up.x, y1 = up.y + S * 0.8, x2 = it.x, y2 = it.y - S * 0.8;
      if (it.stub !== undefined) {
        svg.append(el("path", {"class": "edge pruned",
          d: "M" + x1 + "," + y1 + " L" + x2 + "," + (y2 + 8)}));
        var dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy) || 1;
        var nx = -dy / len * 7, ny = dx / len * 7, cx = x1 + dx * 0.35, cy = y1 + dy * 0.35;
        svg.append(el("line", {"class": "cut",
          x1: cx - nx, y1: cy - ny, x2: cx + nx, y2: cy + ny}));
        return;
      }
      var onPv = pv.has(it.i) && pv.has(up.i);
      svg.append(el("path", {"class": onPv ? "edge pv" : "edge",
        d: "M" + x1 + "," + y1 + " L" + x2 + "," + y2}));
      svg.append(el("text", {"class": "move", x: x1 + (x2 - x1) * 0.7,
        y: y1 + (y2 - y1) * 0.7 + 4}, N[it.i][1]));
    });
    items.forEach(function (it) {
      if (it.stub !== undefined) {
        svg.append(el("rect", {"class": "stub",
          x: it.x - 14, y: it.y - 9, width: 28, height: 18, rx: 3}));
        svg.append(el("text", {"class": "move pruned", x: it.x, y: it.y + 4}, it.stub));
        return;
      }
      var n = N[it.i], g = el("g", {"class": "tree-node", "data-i": it.i, tabindex: 0});
      var cls = ["node", {i: "inner", l: "leaf", t: "terminal", b: "table"}[n[6]]];
      if (pv.has(it.i)) cls.push("pv");
      if (it.folded) cls.push("folded");
      if (n[9].length) g.classList.add("foldable");
      var shape = fmtShape(n, it.x, it.y); shape.setAttribute("class", cls.join(" "));
      g.append(shape);
      var dy = n[6] === "i" ? (n[2] ? 3 : -3) : 0;
      g.append(el("text", {"class": "value", x: it.x, y: it.y + dy}, n[3]));
      g.append(el("text", {"class": "order", x: it.x - S - 2, y: it.y - S + 4}, "#" + it.i));
      var below = it.y + S + 11;
      if (data.window && n[6] !== "t") {
        g.append(el("text", {"class": "window", x: it.x, y: below},
          "\u27e8" + n[4] + "," + n[5] + "\u27e9"));
        below += 12;
      }
      if (n[6] === "b") { g.append(el("text", {"class": "window", x: it.x, y: below}, "table")); }
      if (it.folded) {
        g.append(el("text", {"class": "fold", x: it.x, y: below},
          "+" + it.folded.toLocaleString("en")));
      }
      g.addEventListener("click", function () {
        if (n[9].length) {
          if (opened.has(it.i)) opened.delete(it.i); else opened.add(it.i);
          draw();
        }
        show(it.i);
      });
      g.addEventListener("keydown", function (e) {
        if (e.key === "Enter") g.dispatchEvent(new Event("click"));
      });
      svg.append(g);
    });
  }
  document.getElementById("fold-all").addEventListener("click", function () {
    opened = new Set(data.opened); draw();
  });
  document.getElementById("unfold-more").addEventListener("click", function () {
    // Unfold every shown folded node one level (the children of what is shown).
    var shownFolded = [];
    place().forEach(function (it) { if (it.folded) shownFolded.push(it.i); });
    shownFolded.forEach(function (i) { opened.add(i); });
    draw();
  });
  draw();
  show(0);
  // Start with the root in view: wide trees put it far to the right.
  var canvas = document.getElementById("canvas"), root = svg.querySelector('[data-i="0"]');
  if (root) {
    var box = root.getBBox();
    canvas.scrollLeft = Math.max(0, box.x + box.width / 2 - canvas.clientWidth / 2);
  }
})();
"""

PAGE_STYLE: Final = """
body{font:14px/1.4 sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:10px 16px;background:#fff;border-bottom:1px solid #ddd}
header h1{font-size:17px;margin:0 0 4px}
header p{margin:2px 0;color:#444}
main{display:flex;gap:12px;padding:12px;align-items:flex-start}
#canvas{flex:1;min-width:0;max-width:100%;overflow:auto;background:#fff;
border:1px solid #ddd;max-height:85vh}
header h1,header p{overflow-wrap:anywhere}
aside{width:290px;flex:none;background:#fff;border:1px solid #ddd;padding:10px}
aside dl{display:grid;grid-template-columns:auto 1fr;gap:2px 8px;margin:0}
aside dt{color:#666}aside dd{margin:0;word-break:break-all}
button{font:inherit;margin-right:6px}
.tree-node.foldable{cursor:pointer}
.legend{font-size:12px;color:#555}
@media (max-width:700px){main{flex-direction:column}
aside,#canvas{width:auto;align-self:stretch;box-sizing:border-box}}
"""


def render_html(trace: Trace, *, budget: int = HTML_BUDGET) -> str:
    """Return a self-contained page that draws the tree and unfolds subtrees on click.

    Everything is inline (style, script, data): the page fetches nothing.
    """
    opened = unfolded(trace, budget)
    title, subtitle = headings(trace)
    data = {
        "nodes": compact_nodes(trace),
        "opened": sorted(opened),
        "pv": principal_path(trace),
        "window": has_window(trace),
        "step": x_step(trace),
        "value": json_number(trace.value),
    }
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # Inside a script element only "</" could end it early.
    payload = payload.replace("</", "<\\/")
    counts = ", ".join(f"{count:,}" for count in trace.counts_by_depth)
    legend = (
        "Triangles up: MAX, down: MIN; boxes: leaves (evaluated), green: game over, "
        "yellow: ended by the table. #i: visit order; ⟨alpha,beta⟩: the window on entry; blue: the "
        "principal variation; dashed grey with a red bar: never searched after a cut-off; "
        "≥v / ≤v: a cut-off node's value, a bound for its mover; "
        "+k: k nodes folded (click a node to unfold or fold it)."
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{PAGE_STYLE}{STYLE}</style>
</head>
<body>
<header>
<h1>{escape(title)}</h1>
<p>{escape(subtitle)}</p>
<p>Nodes by depth: {escape(counts)}. PV: {escape(" ".join(trace.pv) or "-")}</p>
<p class="legend">{escape(legend)}</p>
<p><button id="unfold-more" type="button">Unfold one more level</button>
<button id="fold-all" type="button">Fold back</button></p>
</header>
<main>
<div id="canvas"><svg id="tree" xmlns="http://www.w3.org/2000/svg" role="img"
 aria-label="search tree"></svg></div>
<aside><dl id="info"></dl></aside>
</main>
<script type="application/json" id="trace-data">{payload}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""
