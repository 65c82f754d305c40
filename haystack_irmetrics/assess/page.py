"""The judging page: one HTML document with its style and script inline (nothing is fetched but the server's
own answers), which draws every text it is sent as text, never as markup (the guidelines too: Markdown shown as
the characters it is).

Keys (:data:`KEYS`, shown on the page's help, ``?``): ``0`` .. the top grade label the pair shown and show the
next, ``s`` skips it, ``u`` takes back the last label or skip, ``a`` accepts the model's suggested grade,
``m`` shows the model's answer, ``x`` marks the pair unsure, ``n`` writes a note (Enter or Escape go back to
the keys), ``h`` shows the history, ``b`` opens the pair judged before the one shown (a grade key then
relabels it), Escape goes back to the pair to judge, ``g`` shows the guidelines. While the guidelines or the
help are open (over the pair's column; the scale and the status line stay in view) the keys that act on the pair
(grades, ``a``, ``s``, ``u``, ``b``, ``x``, ``n``) do nothing to it and the status line says to close the panel
first: the pair under it is not seen, so it is never labelled unseen. A held key does not repeat,
and no key is read while the server has not answered the last one (the page shows "saving"), so what is shown
is always what is stored. Buttons do the same for a mouse; a pair in the history opens with a click.

Focus never carries from one pair to the next: when another pair is shown the passage takes the focus, so
Space, Enter, the arrows, Page Up/Down, Home and End scroll it and cannot press a button that was clicked or
tabbed to on the pair before. Ids are drawn as written (no ``text-transform``).
"""

from __future__ import annotations

from html import escape

from .store import MAX_NOTE

#: The page's keys and what each does, as its help lists them.
KEYS = (
    ("0 \u2026 top grade", "label the pair shown (a pair opened again: relabel it)"),
    ("s", "skip: the pair comes back after the others"),
    ("u", "undo the last label or skip"),
    ("a", "accept the model's suggested grade"),
    ("m", "show or hide the model's answer"),
    ("x", "mark the pair unsure (kept with its label)"),
    ("n", "write a note on the pair (Enter or Esc: back to the keys)"),
    ("h", "show or hide the history"),
    ("b", "open the pair judged before the one shown"),
    ("Esc", "back to the pair to judge; close a panel"),
    ("g", "show or hide the guidelines (while open, the keys above that act on the pair do nothing)"),
    ("?", "show or hide this help (the same)"),
    ("Space, Enter", "scroll the passage (never label)"),
)

_STYLE = """
:root { --ink: #1d232b; --muted: #5b6470; --line: #d7dce2; --accent: #1f5fbf; --bad: #b3261e; --mark: #ffe48a;
        --warn: #8a5a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: #f4f6f8; }
header { position: sticky; top: 0; z-index: 3; display: flex; flex-wrap: wrap; gap: 4px 20px; align-items: center;
         padding: 8px 24px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 17px; margin: 0; font-weight: 600; }
header .who { color: var(--muted); }
#progress-box, #pace { display: flex; align-items: center; gap: 12px; font-variant-numeric: tabular-nums;
                       font-size: 14px; }
#progress-box { margin-left: auto; }
#progress-box progress { width: 140px; height: 10px; accent-color: var(--accent); }
#pace { color: var(--muted); }
main { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 20px; max-width: 1600px; margin: 0 auto;
       padding: 20px 24px 40px; align-items: start; }
main.with-history { grid-template-columns: 260px minmax(0, 1fr) 340px; }
section, aside > div, #history { background: #fff; border: 1px solid var(--line); border-radius: 8px;
                                 padding: 16px 20px; }
.ask { font-size: 15px; font-weight: 600; margin: 0 0 10px; }
.label { font-size: 12px; letter-spacing: .04em; text-transform: uppercase; color: var(--muted); margin: 0 0 4px; }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; color: var(--muted);
      overflow-wrap: anywhere; text-transform: none; letter-spacing: normal; }
#query { font-size: 22px; font-weight: 600; margin: 0 0 2px; overflow-wrap: anywhere; }
#query-box { position: sticky; top: 50px; z-index: 1; box-shadow: 0 6px 8px -6px rgba(29, 35, 43, .18); }
#topic { margin-top: 16px; font-size: 15px; overflow-wrap: anywhere; }
#topic p { margin: 2px 0 6px; white-space: pre-wrap; }
#topic .label { margin: 0; }
#reopened { margin: 8px 0 0; padding: 6px 10px; border-radius: 6px; background: #fff4d6; color: var(--warn);
            font-size: 14px; }
#doc { margin-top: 16px; }
#doc:focus, #done:focus { outline: none; }
#title { font-size: 18px; margin: 4px 0 10px; overflow-wrap: anywhere; }
#text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: 16px; line-height: 1.6; }
mark { background: var(--mark); color: inherit; padding: 0 1px; border-radius: 2px; }
.flag { display: inline-block; margin-left: 8px; padding: 0 8px; border-radius: 10px; font-size: 12px;
        background: #eef1f5; color: var(--muted); }
aside { position: sticky; top: 62px; display: flex; flex-direction: column; gap: 12px;
        max-height: calc(100vh - 72px); overflow-y: auto; }
#scale { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
#scale button { display: grid; grid-template-columns: 34px 1fr; gap: 10px; width: 100%; text-align: left;
                font: inherit; font-size: 14px; line-height: 1.4; color: inherit; background: #fff;
                border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; cursor: pointer; }
#scale button:hover { border-color: var(--accent); }
#scale button:focus-visible { border-color: var(--accent); outline: 2px solid var(--accent); outline-offset: 0; }
#scale button.suggested { border-color: var(--accent); background: #eef4fd; }
#scale button.given { border-width: 2px; border-color: var(--warn); }
#scale kbd { align-self: start; }
kbd { display: inline-block; min-width: 26px; text-align: center; font: 600 15px ui-monospace, monospace;
      padding: 2px 6px; border: 1px solid #b9c0c9; border-bottom-width: 3px; border-radius: 5px; background: #f8f9fb; }
#actions { display: flex; flex-wrap: wrap; gap: 8px; }
#actions button { flex: 1 1 30%; font: inherit; font-size: 14px; padding: 6px 8px; border: 1px solid var(--line);
                  border-radius: 6px; background: #fff; cursor: pointer; color: inherit; white-space: nowrap; }
#actions button:disabled, #scale button:disabled { color: #9aa3ad; cursor: default; }
#actions button:focus-visible { outline: 2px solid var(--accent); }
#unsure[aria-pressed="true"] { background: #fff4d6; border-color: var(--warn); color: var(--warn); font-weight: 600; }
#note-row { display: flex; gap: 8px; align-items: center; margin-top: 10px; font-size: 14px; }
#note-input { flex: 1; min-width: 0; font: inherit; font-size: 14px; padding: 4px 8px; border: 1px solid var(--line);
              border-radius: 6px; }
#status { min-height: 1.5em; font-size: 14px; color: var(--muted); margin: 10px 0 0; }
#status.error { color: var(--bad); font-weight: 600; }
#note:empty { display: none; }
#prelabel-box { font-size: 14px; margin: 10px 0 0; }
#raw { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 20vh; overflow-y: auto; font-size: 13px;
       background: #f4f6f8; border-radius: 6px; padding: 6px 8px; margin: 6px 0 0; }
#history { position: sticky; top: 62px; max-height: calc(100vh - 84px); overflow-y: auto; padding: 12px 14px;
           font-size: 14px; }
#history h2 { font-size: 15px; margin: 0 0 6px; }
#history h3 { font-size: 13px; margin: 10px 0 4px; color: var(--muted); overflow-wrap: anywhere; }
#history ol { list-style: none; margin: 0; padding: 0; }
#history button { display: flex; gap: 8px; width: 100%; font: inherit; font-size: 13px; text-align: left;
                  background: none; border: 1px solid transparent; border-radius: 4px; padding: 1px 6px;
                  cursor: pointer; color: inherit; }
#history button:hover, #history button.on { border-color: var(--accent); background: #eef4fd; }
#history .doc { flex: 1; min-width: 0; overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
#history .grade { font-weight: 600; font-variant-numeric: tabular-nums; }
/* over the pair's column only: the scale and the status line (which says why a key did nothing) stay in view */
.overlay { position: fixed; z-index: 5; top: 60px; left: calc(max(0px, (100vw - 1600px) / 2) + 24px);
           right: calc(max(0px, (100vw - 1600px) / 2) + 404px); max-height: calc(100vh - 100px); overflow-y: auto;
           background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 24px;
           box-shadow: 0 12px 32px rgba(29, 35, 43, .25); }
.overlay h2 { margin: 0 0 8px; font-size: 18px; }
#guidelines-text { white-space: pre-wrap; overflow-wrap: anywhere; font: 15px/1.55 system-ui, sans-serif; margin: 0; }
#help table { border-collapse: collapse; font-size: 14px; }
#help td { padding: 3px 12px 3px 0; vertical-align: top; }
#done h2 { margin: 0 0 8px; font-size: 20px; }
.hidden { display: none !important; }
@media (max-width: 1100px) { main.with-history { grid-template-columns: minmax(0, 1fr) 340px; }
  main.with-history #history { grid-column: 1 / -1; position: static; max-height: 40vh; } }
@media (max-width: 900px) { main, main.with-history { grid-template-columns: minmax(0, 1fr); }
  aside { position: static; } .overlay { left: 12px; right: 12px; } }
"""

_SCRIPT = """
"use strict";
const token = document.querySelector('meta[name="assess-token"]').content;
const $ = (id) => document.getElementById(id);
let state = null;
let busy = false;
let shown = null;
let historyOpen = false;
let historyVersion = null;
const groups = new Map();
const rowButtons = new Map();
let onButton = null;
let rawOpen = false;
let draft = { note: "", unsure: false };

function fill(element, parts) {
  element.replaceChildren();
  for (const [text, hit] of parts) {
    if (hit) {
      const mark = document.createElement("mark");
      mark.textContent = text;
      element.append(mark);
    } else {
      element.append(document.createTextNode(text));
    }
  }
}

function drawScale(scale) {
  const list = $("scale");
  if (list.childElementCount === scale.length) return;
  list.replaceChildren();
  for (const [grade, definition] of scale) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.grade = String(grade);
    const key = document.createElement("kbd");
    key.textContent = String(grade);
    const text = document.createElement("span");
    text.textContent = definition;
    button.append(key, text);
    button.addEventListener("click", () => act("label", grade));
    item.append(button);
    list.append(item);
  }
  $("keys").textContent = "0\\u2013" + scale[scale.length - 1][0];
}

function clock(seconds) {
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return minutes + " min";
  return Math.floor(minutes / 60) + " h " + String(minutes % 60).padStart(2, "0") + " min";
}

function drawPace(pace) {
  $("spent").textContent = clock(pace.seconds);
  $("rate").textContent = pace.per_hour === null ? "\\u2013" : String(Math.round(pace.per_hour));
  $("left").textContent = pace.remaining === null ? "\\u2013" : clock(pace.remaining);
}

function drawTopic(pair) {
  for (const name of ["description", "narrative"]) {
    $(name).textContent = pair[name] || "";
    $(name + "-label").classList.toggle("hidden", !pair[name]);
    $(name).classList.toggle("hidden", !pair[name]);
  }
  $("topic").classList.toggle("hidden", !pair.description && !pair.narrative);
}

function drawModel(pair) {
  $("prelabel-box").classList.toggle("hidden", pair.prelabel === null);
  $("prelabel").textContent = pair.prelabel === null ? "" : String(pair.prelabel);
  $("raw-button").disabled = pair.raw === null;
  $("raw").textContent = pair.raw || "";
  $("raw").classList.toggle("hidden", !rawOpen || pair.raw === null);
  const given = pair.last && pair.last.kind === "label" ? pair.last.label : null;
  for (const button of document.querySelectorAll("#scale button")) {
    button.classList.toggle("suggested", Number(button.dataset.grade) === pair.prelabel);
    button.classList.toggle("given", pair.reopened && Number(button.dataset.grade) === given);
  }
}

function drawReopened(pair) {
  $("reopened").classList.toggle("hidden", !pair.reopened);
  if (!pair.reopened) return;
  const was = pair.last.kind === "skip" ? "skipped" : "labelled " + pair.last.label;
  $("reopened").textContent = "Judged before: " + was + (pair.last.unsure ? ", unsure" : "") +
    ". A grade key relabels it (the note and the mark go with it); Esc goes back to the pair to judge.";
}

function drawDraft() {
  $("unsure").setAttribute("aria-pressed", draft.unsure ? "true" : "false");
  if ($("note-input").value !== draft.note) $("note-input").value = draft.note;
}

function drawGroup(q, rows) {
  // one query's part of the history: its heading and its pairs, in the order last judged
  const box = document.createElement("div");
  const heading = document.createElement("h3");
  heading.textContent = q;
  const group = document.createElement("ol");
  for (const [, d, kind, label, note, unsure] of rows) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.pair = q + "\\t" + d;
    const doc = document.createElement("span");
    doc.className = "doc";
    doc.textContent = d;
    const grade = document.createElement("span");
    grade.className = "grade";
    grade.textContent = (kind === "skip" ? "skipped" : String(label)) + (unsure ? " ?" : "") + (note ? " \\u270e" : "");
    if (note) button.title = note;
    button.append(doc, grade);
    item.append(button);
    group.append(item);
    rowButtons.set(button.dataset.pair, button);
  }
  box.append(heading, group);
  groups.set(q, box);
  return box;
}

function drawHistory(rows) {
  groups.clear();
  rowButtons.clear();
  const list = document.createDocumentFragment();
  let start = 0;
  for (let i = 1; i <= rows.length; i++) {
    if (i === rows.length || rows[i][0] !== rows[start][0]) {
      list.append(drawGroup(rows[start][0], rows.slice(start, i)));
      start = i;
    }
  }
  $("history-count").textContent = String(rows.length);
  $("history-list").replaceChildren(list);
}

function patchHistory(patch) {
  // what a key changed: the parts of the queries it touched, drawn again in their place; the rest stays
  for (const { query, rows, after } of patch.groups) {
    const old = groups.get(query);
    if (old) {
      for (const button of old.querySelectorAll("button[data-pair]")) rowButtons.delete(button.dataset.pair);
      old.remove();
      groups.delete(query);
    }
    if (!rows.length) continue;
    const box = drawGroup(query, rows);
    const previous = after === null ? null : groups.get(after);
    if (previous) previous.after(box);
    else $("history-list").prepend(box);
  }
  $("history-count").textContent = String(patch.count);
}

function markShown() {
  const on = rowButtons.get(document.body.dataset.pair) || null;
  if (onButton && onButton !== on) onButton.classList.remove("on");
  if (on) on.classList.add("on");
  onButton = on;
}

function render(next) {
  state = next;
  const p = next.progress;
  $("judged").textContent = p.judged;
  $("budget").textContent = p.budget;
  $("relevant").textContent = p.relevant;
  $("skipped").textContent = p.skipped;
  $("threshold").textContent = p.threshold;
  $("bar").max = Math.max(p.budget, 1);
  $("bar").value = Math.min(p.judged, p.budget);
  drawPace(next.pace);
  drawScale(next.scale);
  const pair = next.pair;
  $("pair").classList.toggle("hidden", !pair);
  $("done").classList.toggle("hidden", !!pair);
  $("skip").disabled = !pair || pair.reopened;
  for (const button of document.querySelectorAll("#scale button")) button.disabled = !pair;
  $("undo").disabled = !next.can_undo;
  document.body.dataset.pair = pair ? pair.query_id + "\\t" + pair.doc_id : "";
  document.body.dataset.reopened = pair && pair.reopened ? "true" : "false";
  if (pair) {
    $("query-id").textContent = pair.query_id;
    $("query").textContent = pair.query;
    $("doc-id").textContent = pair.doc_id;
    fill($("title"), pair.title);
    $("title").classList.toggle("hidden", pair.title.length === 0);
    fill($("text"), pair.text);
    $("was-skipped").classList.toggle("hidden", !pair.skipped || pair.reopened);
    drawTopic(pair);
    drawReopened(pair);
  }
  if (document.body.dataset.pair !== shown) {
    // another pair: focus leaves the button pressed on the last one, so a reading key cannot press it again;
    // its note and mark start from what was kept with its last label
    shown = document.body.dataset.pair;
    const last = pair && pair.last && pair.last.kind === "label" ? pair.last : null;
    draft = { note: last && last.note ? last.note : "", unsure: !!(last && last.unsure) };
    rawOpen = false;
    window.scrollTo(0, 0);
    $(pair ? "doc" : "done").focus({ preventScroll: true });
  }
  if (pair) drawModel(pair);
  drawDraft();
  if (historyOpen && next.history_version) {
    if (next.history) drawHistory(next.history);
    else if (next.history_patch) patchHistory(next.history_patch);
    historyVersion = next.history_version;
  }
  if (historyOpen) markShown();
  $("note").textContent = next.note || "";
  document.body.dataset.ready = "true";
}

function say(text) {
  if (busy) return;
  $("status").className = "error";
  $("status").textContent = text;
}

async function send(path, body, quiet) {
  busy = true;
  document.body.dataset.busy = "true";
  const status = $("status");
  status.className = "";
  status.textContent = "saving\\u2026";
  try {
    const init = { method: body === undefined ? "GET" : "POST", cache: "no-store", credentials: "same-origin",
                   headers: { "X-Assess-Token": token } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const answer = await fetch(path, init);
    const data = await answer.json();
    if (data.state) render(data.state);
    if (answer.ok) {
      status.textContent = body === undefined || quiet ? "" : "saved";
    } else {
      status.className = "error";
      status.textContent = data.error || ("the server answered " + answer.status);
    }
  } catch (error) {
    status.className = "error";
    status.textContent = "not saved: the server does not answer. Start it again with the same command " +
      "(nothing saved is lost), then press the key again.";
  } finally {
    busy = false;
    document.body.dataset.busy = "false";
  }
}

function held() {
  // with the history open, the version of it shown: only what changed since comes back (the whole list at first)
  return historyOpen ? historyVersion || true : false;
}

function about(pair, extra) {
  return Object.assign({ query_id: pair.query_id, doc_id: pair.doc_id, history: held() }, extra || {});
}

function stateUrl() {
  return "/api/state" + (historyOpen ? "?history=" + encodeURIComponent(historyVersion || "1") : "");
}

function refresh() {
  const pair = state && state.pair;
  if (pair && pair.reopened) return send("/api/open", about(pair), true);
  return send(stateUrl());
}

function act(what, grade) {
  if (busy || !state) return;
  const pair = state.pair;
  if (what === "undo") return send("/api/undo", { history: held() });
  if (what === "back") return send("/api/back", pair ? about(pair) : { history: held() }, true);
  if (what === "open") return send("/api/open", about({ query_id: grade[0], doc_id: grade[1] }), true);
  if (!pair) return;
  if (what === "skip") {
    if (pair.reopened) return say("a pair opened again is relabelled, or left with Esc: it is not skipped");
    return send("/api/skip", about(pair));
  }
  const marks = { label: grade, note: draft.note, unsure: draft.unsure };
  return send(pair.reopened ? "/api/relabel" : "/api/label", about(pair, marks));
}

// What a key that acts on the pair says while a panel covers it, by panel.
const COVERED = { guidelines: "close the guidelines (Esc or g) to judge", help: "close the help (Esc or ?) to judge" };

function openPanel() {
  return Object.keys(COVERED).find((id) => !$(id).classList.contains("hidden")) || null;
}

function uncovered() {
  // the panel's message goes with it; any other message stays
  if (Object.values(COVERED).includes($("status").textContent)) $("status").textContent = "";
}

function toggle(id) {
  const open = $(id).classList.toggle("hidden") === false;
  for (const other of ["guidelines", "help"]) if (other !== id) $(other).classList.add("hidden");
  uncovered();  // closed, or another panel: its message (if any) is stale
  return open;
}

function toggleHistory() {
  historyOpen = !historyOpen;
  historyVersion = null;  // drawn whole when it opens
  $("history").classList.toggle("hidden", !historyOpen);
  $("main").classList.toggle("with-history", historyOpen);
  if (historyOpen) refresh();
}

function leave() {
  const panels = ["guidelines", "help"].filter((id) => !$(id).classList.contains("hidden"));
  for (const id of panels) $(id).classList.add("hidden");
  if (panels.length) uncovered();
  if (!panels.length && state && state.pair && state.pair.reopened) backToCurrent();
}

function backToCurrent() {
  return send(stateUrl());
}

function onKey(key, event) {
  const pair = state.pair;
  const top = state.scale[state.scale.length - 1][0];
  const panel = openPanel();
  if (panel && /^[0-9asubxn]$/.test(key)) {
    // the pair is under the panel, unseen: a key read there must not label, skip, undo or mark it
    say(COVERED[panel]);
  } else if (/^[0-9]$/.test(key)) {
    if (Number(key) <= top) act("label", Number(key));
    else say("the grades are 0 to " + top);
  } else if (key === "s") act("skip");
  else if (key === "u") act("undo");
  else if (key === "b") act("back");
  else if (key === "a") {
    if (pair && pair.prelabel !== null) act("label", pair.prelabel);
    else say("no model suggestion is shown for this pair");
  } else if (key === "m") {
    if (!pair || pair.raw === null) return say("no model answer for this pair");
    rawOpen = !rawOpen;
    $("raw").classList.toggle("hidden", !rawOpen);
  } else if (key === "x") {
    draft.unsure = !draft.unsure;
    drawDraft();
  } else if (key === "n") {
    if (pair) $("note-input").focus();
  } else if (key === "h") toggleHistory();
  else if (key === "g") {
    if ($("guidelines-text").textContent) toggle("guidelines");
    else say("no guidelines: give --guidelines FILE");
  } else if (key === "?") toggle("help");
  else if (key === "escape") leave();
  else return false;
  event.preventDefault();
  return true;
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || !state) return;
  if (event.target === $("note-input")) {
    // typing a note: its keys are text; Enter or Escape go back to the judging keys
    if (event.key === "Enter" || event.key === "Escape") {
      event.preventDefault();
      $("doc").focus({ preventScroll: true });
    }
    return;
  }
  onKey(event.key.toLowerCase(), event);
});
$("note-input").addEventListener("input", () => { draft.note = $("note-input").value; });
$("skip").addEventListener("click", () => act("skip"));
$("undo").addEventListener("click", () => act("undo"));
$("back").addEventListener("click", () => act("back"));
$("unsure").addEventListener("click", () => { draft.unsure = !draft.unsure; drawDraft(); });
$("accept").addEventListener("click", () => state && state.pair && act("label", state.pair.prelabel));
$("raw-button").addEventListener("click", () => { rawOpen = !rawOpen; render(state); });
$("history-button").addEventListener("click", toggleHistory);
$("history-list").addEventListener("click", (event) => {
  // one listener for every row (thousands of them; a key draws again only its query's)
  const button = event.target.closest("button[data-pair]");
  if (button) act("open", button.dataset.pair.split("\\t"));
});
$("guidelines-button").addEventListener("click", () => toggle("guidelines"));
$("help-button").addEventListener("click", () => toggle("help"));
for (const close of document.querySelectorAll(".close")) close.addEventListener("click", leave);
send("/api/state");
"""


#: The page's body but its script (``str.format`` fields: ``who``, ``keys``, ``guidelines``, ``max_note``).
_BODY = """<body data-ready="false">
<header>
  <h1>Relevance judging</h1><span class="who">assessor <strong>{who}</strong></span>
  <div id="progress-box" aria-live="polite">
    <progress id="bar" value="0" max="1"></progress>
    <span><strong id="judged">0</strong> / <span id="budget">0</span> judged</span>
    <span><strong id="relevant">0</strong> relevant (&ge; <span id="threshold">1</span>)</span>
    <span><span id="skipped">0</span> skipped</span>
  </div>
  <div id="pace" title="time judged (a pair shown over 5 minutes counts 5), pairs an hour at that pace, and the
    time the rest of the budget takes at it">
    <span>judging <strong id="spent">0 min</strong></span>
    <span><strong id="rate">&ndash;</strong> pairs/h</span>
    <span>about <strong id="left">&ndash;</strong> left</span>
  </div>
</header>
<main id="main">
  <nav id="history" class="hidden" aria-label="history">
    <h2>History &middot; <span id="history-count">0</span> pairs</h2>
    <div id="history-list"></div>
  </nav>
  <div>
    <div id="pair" class="hidden">
      <section id="query-box">
        <p class="label">Query <span class="id" id="query-id"></span><span class="flag hidden" id="was-skipped">skipped
          before</span></p>
        <p id="query"></p>
        <p id="reopened" class="hidden"></p>
      </section>
      <section id="topic" class="hidden">
        <p class="label" id="description-label">Description</p><p id="description"></p>
        <p class="label" id="narrative-label">Narrative</p><p id="narrative"></p>
      </section>
      <section id="doc" tabindex="-1">
        <p class="label">Document <span class="id" id="doc-id"></span> &middot; the query's words are
          <mark>marked</mark></p>
        <h2 id="title"></h2>
        <p id="text"></p>
      </section>
    </div>
    <section id="done" class="hidden" tabindex="-1">
      <h2>Nothing left to judge</h2>
      <p>Every pair is judged, or the budget is spent. Press <kbd>u</kbd> to take back the last label, <kbd>b</kbd>
        or <kbd>h</kbd> to open a pair judged before. Stop the server (Ctrl-C) to write <code>qrels.tsv</code> and
        <code>judgments.jsonl</code>.</p>
    </section>
  </div>
  <aside>
    <div>
      <p class="ask">How useful is the document to the person who typed the query? Press
        <span id="keys">0&ndash;3</span>.</p>
      <ol id="scale"></ol>
      <p id="prelabel-box" class="hidden">The model suggests <strong id="prelabel"></strong>:
        <button type="button" id="accept"><kbd>a</kbd> accept</button>
        <button type="button" id="raw-button"><kbd>m</kbd> its answer</button></p>
      <p id="raw" class="hidden"></p>
    </div>
    <div>
      <div id="actions">
        <button type="button" id="skip"><kbd>s</kbd> skip</button>
        <button type="button" id="undo"><kbd>u</kbd> undo</button>
        <button type="button" id="unsure" aria-pressed="false"><kbd>x</kbd> unsure</button>
        <button type="button" id="back"><kbd>b</kbd> back</button>
        <button type="button" id="history-button"><kbd>h</kbd> history</button>
        <button type="button" id="guidelines-button"><kbd>g</kbd> guidelines</button>
      </div>
      <div id="note-row"><label for="note-input"><kbd>n</kbd> note</label>
        <input id="note-input" type="text" maxlength="{max_note}" autocomplete="off"
          placeholder="kept with the label"></div>
      <p id="status" role="status" aria-live="polite"></p>
      <p class="id" id="note"></p>
      <button type="button" id="help-button" class="id"><kbd>?</kbd> every key</button>
    </div>
  </aside>
</main>
<div id="guidelines" class="overlay hidden" role="dialog" aria-label="guidelines">
  <h2>Guidelines <button type="button" class="close">Esc</button></h2>
  <pre id="guidelines-text">{guidelines}</pre>
</div>
<div id="help" class="overlay hidden" role="dialog" aria-label="keys">
  <h2>Keys <button type="button" class="close">Esc</button></h2>
  <table>{keys}</table>
</div>
"""


def render_page(token: str, nonce: str, assessor: str, guidelines: str | None = None) -> str:
    """The page for ``assessor``; ``token`` goes back with every request, ``nonce`` lets the inline style and
    script run under the page's Content-Security-Policy; ``guidelines`` (Markdown) are drawn as text."""
    who = escape(assessor)
    keys = "".join(f"<tr><td><kbd>{escape(k)}</kbd></td><td>{escape(what)}</td></tr>" for k, what in KEYS)
    body = _BODY.format(who=who, keys=keys, guidelines=escape(guidelines or ""), max_note=MAX_NOTE)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="assess-token" content="{escape(token)}">
<link rel="icon" href="data:,">
<title>Judging · {who}</title>
<style nonce="{escape(nonce)}">{_STYLE}</style>
</head>
{body}<script nonce="{escape(nonce)}">{_SCRIPT}</script>
</body>
</html>
"""


__all__ = ["KEYS", "render_page"]
