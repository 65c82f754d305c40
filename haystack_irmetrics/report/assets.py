"""The report page's style and script, inlined into every page (no file, CDN or font is fetched).

The script reads the page's JSON (``<script id="report-data" type="application/json">``), draws the
per-query table one page at a time (sorted, filtered) and builds a query's drill-down when its row is
clicked, so a page over 20,000 queries holds only the rows in view in its DOM.
"""

CSS = """
:root { --rel: #1a7f37; --non: #b42318; --unj: #6e7781; --hi: #fff3bf; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1f2328; }
header { background: #24292f; color: #fff; padding: 14px 24px; }
header h1 { font-size: 20px; margin: 0 0 4px; }
header p { margin: 0; color: #d0d7de; font-size: 13px; }
nav { position: sticky; top: 0; background: #f6f8fa; border-bottom: 1px solid var(--line); padding: 6px 24px; z-index: 2; }
nav a { margin-right: 18px; color: #0969da; text-decoration: none; }
main { padding: 8px 24px 40px; }
section { margin: 18px 0 28px; }
h2 { font-size: 17px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #f6f8fa; }
td.name, th.name, td.text, th.text { text-align: left; }
td.text { white-space: normal; max-width: 460px; }
td.best { font-weight: 700; background: #dafbe1; }
td.pos { color: var(--rel); } td.neg { color: var(--non); }
sup.sig { color: #8250df; font-weight: 700; }
sup.sig.worse { color: #cf222e; }
span.bounds { display: block; color: #57606a; font-size: 11px; font-weight: 400; }
.notes { color: #57606a; font-size: 13px; }
.curves { display: flex; flex-wrap: wrap; gap: 12px; }
.curves figure { margin: 0; border: 1px solid var(--line); padding: 4px; }
.curves img { display: block; width: 430px; max-width: 100%; height: auto; }
.curves figcaption { font-size: 12px; color: #57606a; }
.controls { display: flex; gap: 14px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.controls input[type=search] { width: 260px; padding: 3px 6px; }
#pq th { cursor: pointer; user-select: none; }
#pq th[aria-sort=ascending]::after { content: " \\25B2"; }
#pq th[aria-sort=descending]::after { content: " \\25BC"; }
#pq tbody tr.row { cursor: pointer; }
#pq tbody tr.row:hover { background: #f6f8fa; }
#pq tbody tr.open { background: #ddf4ff; }
.drill { text-align: left; white-space: normal; background: #fbfcfd; padding: 10px; }
.drill h3 { margin: 0 0 6px; font-size: 15px; }
.lists { display: flex; gap: 10px; align-items: flex-start; overflow-x: auto; }
.lists .col { min-width: 260px; max-width: 380px; flex: 1; }
.lists h4 { margin: 4px 0; }
.lists ol { list-style: none; padding: 0; margin: 0; }
.doc { border: 1px solid var(--line); border-left: 5px solid var(--unj); margin: 0 0 3px; padding: 2px 6px; font-size: 12.5px; }
.doc.rel { border-left-color: var(--rel); } .doc.non { border-left-color: var(--non); }
.doc.same { background: var(--hi); outline: 2px solid #d4a72c; }
.doc .rank { color: #57606a; display: inline-block; min-width: 2.2em; }
.doc .id { font-family: ui-monospace, monospace; }
.doc .j { float: right; font-size: 11px; padding: 0 4px; border-radius: 3px; color: #fff; background: var(--unj); }
.doc.rel .j { background: var(--rel); } .doc.non .j { background: var(--non); }
.doc .title { font-weight: 600; }
.doc .snip { color: #57606a; display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
.legend span { margin-right: 12px; }
.off { display: none; }
.columns { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center; margin: 6px 0 10px; font-size: 12.5px; }
.columns .group b { margin-right: 4px; }
.columns label { margin-right: 6px; white-space: nowrap; }
.columns input { vertical-align: -2px; margin: 0 2px 0 0; }
"""

JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var runs = D.runs, nq = D.qids.length, base = D.baseline;
  var state = { m: D.start || 0, sort: null, dir: -1, filter: "", page: 0, size: 50, open: null };
  var table = document.getElementById("pq");
  var head = table.querySelector("thead"), body = table.querySelector("tbody");
  var measureSel = document.getElementById("pq-measure"), filterBox = document.getElementById("pq-filter");
  var sizeSel = document.getElementById("pq-size"), pager = document.getElementById("pq-pager");

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function fmt(v) { return v === null || v === undefined ? "\u2014" : v.toFixed(4); }
  function fmtd(v) { return v === null || v === undefined ? "\u2014" : (v > 0 ? "+" : "") + v.toFixed(4); }
  function value(r, m, q) { return D.values[r][m][q]; }
  function delta(r, m, q) {
    var a = value(r, m, q), b = value(base, m, q);
    if (a === null && b === null) return null;
    var fill = D.fill[m];
    return (a === null ? fill : a) - (b === null ? fill : b);
  }
  function columns() {
    var cols = [{ key: "qid", label: "query", cls: "name" }];
    if (D.text.length) cols.push({ key: "text", label: "text", cls: "text" });
    runs.forEach(function (name, r) { cols.push({ key: "v" + r, label: name, run: r }); });
    runs.forEach(function (name, r) { if (r !== base) cols.push({ key: "d" + r, label: "\u0394 " + name, run: r, delta: true }); });
    return cols;
  }
  function keyOf(col, q) {
    if (col.key === "qid") return D.qids[q];
    if (col.key === "text") return D.text[q] || "";
    return col.delta ? delta(col.run, state.m, q) : value(col.run, state.m, q);
  }
  function visible() {
    var f = state.filter.toLowerCase(), out = [];
    for (var q = 0; q < nq; q++) {
      if (!f || D.qids[q].toLowerCase().indexOf(f) >= 0 || (D.text[q] || "").toLowerCase().indexOf(f) >= 0) out.push(q);
    }
    if (state.sort) {
      var col = state.sort, dir = state.dir;
      var keys = {};
      out.forEach(function (q) { keys[q] = keyOf(col, q); });
      out.sort(function (a, b) {
        var x = keys[a], y = keys[b];
        if (x === null && y === null) return a - b;
        if (x === null) return 1;
        if (y === null) return -1;
        if (x < y) return -dir;
        if (x > y) return dir;
        return a - b;
      });
    }
    return out;
  }
  function drawHead() {
    head.textContent = "";
    var tr = el("tr");
    columns().forEach(function (col) {
      var th = el("th", { "data-sort": col.key, "class": col.cls || null }, col.label);
      if (state.sort && state.sort.key === col.key) th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      th.addEventListener("click", function () {
        if (state.sort && state.sort.key === col.key) state.dir = -state.dir;
        else { state.sort = col; state.dir = col.key === "qid" || col.key === "text" ? 1 : -1; }
        state.page = 0; draw();
      });
      tr.appendChild(th);
    });
    head.appendChild(tr);
  }
  function draw() {
    drawHead();
    var rows = visible(), cols = columns();
    var pages = Math.max(1, Math.ceil(rows.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    body.textContent = "";
    rows.slice(state.page * state.size, (state.page + 1) * state.size).forEach(function (q) {
      var tr = el("tr", { "class": "row", "data-qid": D.qids[q] });
      cols.forEach(function (col) {
        var v = keyOf(col, q), td;
        if (col.key === "qid") td = el("td", { "class": "name" }, v);
        else if (col.key === "text") td = el("td", { "class": "text" }, v);
        else if (col.delta) td = el("td", { "class": v > 0 ? "pos" : v < 0 ? "neg" : null }, fmtd(v));
        else td = el("td", null, fmt(v));
        tr.appendChild(td);
      });
      tr.addEventListener("click", function () { toggle(q, tr); });
      body.appendChild(tr);
      if (state.open === q) toggle(q, tr, true);
    });
    pager.textContent = rows.length + " of " + nq + " queries; page " + (state.page + 1) + " of " + pages + " ";
    var prev = el("button", { type: "button", id: "pq-prev" }, "\u2190 previous"), next = el("button", { type: "button", id: "pq-next" }, "next \u2192");
    prev.disabled = state.page === 0; next.disabled = state.page >= pages - 1;
    prev.addEventListener("click", function () { state.page--; draw(); });
    next.addEventListener("click", function () { state.page++; draw(); });
    pager.appendChild(prev); pager.appendChild(next);
  }
  function toggle(q, tr, reopen) {
    var old = body.querySelector("tr.drillrow");
    if (old) { old.previousSibling.classList.remove("open"); old.remove(); }
    if (!reopen && state.open === q && old) { state.open = null; return; }
    state.open = q;
    tr.classList.add("open");
    var row = el("tr", { "class": "drillrow" }), td = el("td", { colspan: columns().length, "class": "drill" });
    td.appendChild(drilldown(q));
    row.appendChild(td);
    tr.after(row);
  }
  function docItem(r, rank, d, c) {
    var j = c < 0 ? "unjudged" : D.labels[c];
    var kind = c < 0 ? "unj" : D.relevant[c] ? "rel" : "non";
    var li = el("li", { "class": "doc " + kind, "data-run": r === null ? null : runs[r], "data-rank": rank, "data-doc": D.docs[d], "data-judgment": j });
    if (rank !== null) li.appendChild(el("span", { "class": "rank" }, rank + "."));
    li.appendChild(el("span", { "class": "id" }, D.docs[d]));
    li.appendChild(el("span", { "class": "j", title: kind === "rel" ? "judged relevant" : kind === "non" ? "judged non-relevant" : "not judged" }, kind === "unj" ? "unjudged" : "label " + j));
    if (D.titles.length && (D.titles[d] || D.snippets[d])) {
      li.appendChild(el("div", { "class": "title" }, D.titles[d] || ""));
      li.appendChild(el("div", { "class": "snip" }, D.snippets[d] || ""));
    }
    return li;
  }
  function drilldown(q) {
    var box = el("div", { "data-drilldown": D.qids[q] });
    box.appendChild(el("h3", null, "Query " + D.qids[q] + (D.text[q] ? ": " + D.text[q] : "")));
    var t = el("table", { "class": "qvalues" }), hr = el("tr");
    hr.appendChild(el("th", { "class": "name" }, "measure"));
    runs.forEach(function (name) { hr.appendChild(el("th", null, name)); });
    t.appendChild(hr);
    var shown = shownMeasures();
    D.measures.forEach(function (m, mi) {
      if (shown && !shown[m]) return;  // the summary's columns: 36 rows would push the lists off the screen
      var tr = el("tr");
      tr.appendChild(el("td", { "class": "name" }, m));
      runs.forEach(function (name, r) { tr.appendChild(el("td", null, fmt(value(r, mi, q)))); });
      t.appendChild(tr);
    });
    box.appendChild(t);
    var lists = el("div", { "class": "lists" });
    runs.forEach(function (name, r) {
      var col = el("div", { "class": "col" });
      col.appendChild(el("h4", null, name + (r === base ? " (baseline)" : "")));
      var flat = D.lists[r] ? D.lists[r][q] : null;
      if (!D.lists[r]) col.appendChild(el("p", { "class": "notes" }, "given as per-query values: no ranked list"));
      else if (!flat.length) col.appendChild(el("p", { "class": "notes" }, "retrieved nothing for this query"));
      else {
        var ol = el("ol");
        for (var i = 0; i < flat.length; i += 2) ol.appendChild(docItem(r, i / 2 + 1, flat[i], flat[i + 1]));
        col.appendChild(ol);
      }
      lists.appendChild(col);
    });
    box.appendChild(lists);
    var missed = D.missed[q];
    var mb = el("div", { "class": "missed" });
    mb.appendChild(el("h4", null, "Judged relevant, retrieved by no run (" + missed.length / 2 + ")"));
    if (missed.length) {
      var ul = el("ol");
      for (var k = 0; k < missed.length; k += 2) ul.appendChild(docItem(null, null, missed[k], missed[k + 1]));
      mb.appendChild(ul);
    }
    box.appendChild(mb);
    box.addEventListener("mouseover", function (ev) { mark(box, ev.target.closest(".doc")); });
    box.addEventListener("mouseleave", function () { mark(box, null); });
    return box;
  }
  function mark(box, li) {
    box.querySelectorAll(".doc.same").forEach(function (x) { x.classList.remove("same"); });
    if (!li) return;
    var doc = li.getAttribute("data-doc");
    box.querySelectorAll(".doc").forEach(function (x) { if (x.getAttribute("data-doc") === doc) x.classList.add("same"); });
  }
  function shownMeasures() {
    // The measures the summary shows now (null: all of them, there is no chooser).
    var chooser = document.getElementById("columns");
    if (!chooser) return null;
    var on = Object.create(null);
    chooser.querySelectorAll("input[data-column]").forEach(function (b) { if (b.checked) on[b.getAttribute("data-column")] = true; });
    return on;
  }
  function columnChooser() {
    // The summary's columns: each checkbox shows or hides one measure's cells and comparison rows.
    var chooser = document.getElementById("columns");
    if (!chooser) return;
    var boxes = Array.prototype.slice.call(chooser.querySelectorAll("input[data-column]"));
    var cells = Array.prototype.slice.call(document.querySelectorAll("#means [data-measure], #comparisons tr[data-measure], #judged tr[data-measure]"));
    var note = chooser.querySelector(".notes");
    function apply() {
      var on = Object.create(null), n = 0;
      boxes.forEach(function (b) { if (b.checked) { on[b.getAttribute("data-column")] = true; n++; } });
      cells.forEach(function (c) { c.classList.toggle("off", !on[c.getAttribute("data-measure")]); });
      note.textContent = "columns (" + n + " of " + boxes.length + " shown):";
    }
    function set(pick) { boxes.forEach(function (b) { b.checked = pick(b); }); apply(); }
    boxes.forEach(function (b) { b.addEventListener("change", apply); });
    document.getElementById("columns-default").addEventListener("click", function () { set(function (b) { return b.hasAttribute("data-default"); }); });
    document.getElementById("columns-all").addEventListener("click", function () { set(function () { return true; }); });
  }
  columnChooser();
  D.measures.forEach(function (m, i) { measureSel.appendChild(el("option", { value: i }, m)); });
  measureSel.value = String(state.m);
  measureSel.addEventListener("change", function () { state.m = +measureSel.value; draw(); });
  filterBox.addEventListener("input", function () { state.filter = filterBox.value; state.page = 0; draw(); });
  sizeSel.addEventListener("change", function () { state.size = +sizeSel.value; state.page = 0; draw(); });
  draw();
  document.body.setAttribute("data-ready", "true");
})();
"""

__all__ = ["CSS", "JS"]
