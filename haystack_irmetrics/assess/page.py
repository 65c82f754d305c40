"""The judging page: one HTML document with its style and script inline (nothing is fetched but the server's
own answers), which draws every text it is sent as text, never as markup.

Keys: ``0`` .. the top grade label the pair shown and show the next, ``s`` skips it, ``u`` takes back the last
label or skip; a held key does not repeat, and no key is read while the server has not answered the last one
(the page shows "saving"), so what is shown is always what is stored. Buttons do the same for a mouse.

Focus never carries from one pair to the next: when another pair is shown the passage takes the focus, so
Space, Enter, the arrows, Page Up/Down, Home and End scroll it and cannot press a button that was clicked or
tabbed to on the pair before. Ids are drawn as written (no ``text-transform``).
"""

from __future__ import annotations

from html import escape

_STYLE = """
:root { --ink: #1d232b; --muted: #5b6470; --line: #d7dce2; --accent: #1f5fbf; --bad: #b3261e; --mark: #ffe48a; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: #f4f6f8; }
header { position: sticky; top: 0; z-index: 2; display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: center;
         padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 17px; margin: 0; font-weight: 600; }
header .who { color: var(--muted); }
#progress-box { display: flex; align-items: center; gap: 12px; margin-left: auto; font-variant-numeric: tabular-nums; }
#progress-box progress { width: 180px; height: 10px; accent-color: var(--accent); }
main { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 20px; max-width: 1400px; margin: 0 auto;
       padding: 20px 24px 40px; align-items: start; }
section, aside > div { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; }
.ask { font-size: 15px; font-weight: 600; margin: 0 0 10px; }
.label { font-size: 12px; letter-spacing: .04em; text-transform: uppercase; color: var(--muted); margin: 0 0 4px; }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; color: var(--muted);
      overflow-wrap: anywhere; text-transform: none; letter-spacing: normal; }
#query { font-size: 22px; font-weight: 600; margin: 0 0 2px; overflow-wrap: anywhere; }
#query-box { position: sticky; top: 46px; z-index: 1; box-shadow: 0 6px 8px -6px rgba(29, 35, 43, .18); }
#doc { margin-top: 16px; }
#doc:focus, #done:focus { outline: none; }
#title { font-size: 18px; margin: 4px 0 10px; overflow-wrap: anywhere; }
#text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: 16px; line-height: 1.6; }
mark { background: var(--mark); color: inherit; padding: 0 1px; border-radius: 2px; }
.flag { display: inline-block; margin-left: 8px; padding: 0 8px; border-radius: 10px; font-size: 12px;
        background: #eef1f5; color: var(--muted); }
aside { position: sticky; top: 70px; display: flex; flex-direction: column; gap: 12px; }
#scale { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
#scale button { display: grid; grid-template-columns: 34px 1fr; gap: 10px; width: 100%; text-align: left;
                font: inherit; font-size: 14px; line-height: 1.4; color: inherit; background: #fff;
                border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; cursor: pointer; }
#scale button:hover { border-color: var(--accent); }
#scale button:focus-visible { border-color: var(--accent); outline: 2px solid var(--accent); outline-offset: 0; }
#scale kbd { align-self: start; }
kbd { display: inline-block; min-width: 26px; text-align: center; font: 600 15px ui-monospace, monospace;
      padding: 2px 6px; border: 1px solid #b9c0c9; border-bottom-width: 3px; border-radius: 5px; background: #f8f9fb; }
#actions { display: flex; gap: 8px; }
#actions button { flex: 1; font: inherit; font-size: 14px; padding: 6px 8px; border: 1px solid var(--line);
                  border-radius: 6px; background: #fff; cursor: pointer; color: inherit; }
#actions button:disabled, #scale button:disabled { color: #9aa3ad; cursor: default; }
#actions button:focus-visible { outline: 2px solid var(--accent); }
#status { min-height: 1.5em; font-size: 14px; color: var(--muted); margin: 10px 0 0; }
#status.error { color: var(--bad); font-weight: 600; }
#note:empty { display: none; }
#prelabel-box { font-size: 14px; margin: 10px 0 0; }
#done h2 { margin: 0 0 8px; font-size: 20px; }
.hidden { display: none !important; }
@media (max-width: 900px) { main { grid-template-columns: minmax(0, 1fr); } aside { position: static; } }
"""

_SCRIPT = """
"use strict";
const token = document.querySelector('meta[name="assess-token"]').content;
const $ = (id) => document.getElementById(id);
let state = null;
let busy = false;
let shown = null;

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
  drawScale(next.scale);
  const pair = next.pair;
  $("pair").classList.toggle("hidden", !pair);
  $("done").classList.toggle("hidden", !!pair);
  $("skip").disabled = !pair;
  for (const button of document.querySelectorAll("#scale button")) button.disabled = !pair;
  $("undo").disabled = !next.can_undo;
  if (pair) {
    $("query-id").textContent = pair.query_id;
    $("query").textContent = pair.query;
    $("doc-id").textContent = pair.doc_id;
    fill($("title"), pair.title);
    $("title").classList.toggle("hidden", pair.title.length === 0);
    fill($("text"), pair.text);
    $("was-skipped").classList.toggle("hidden", !pair.skipped);
    $("prelabel-box").classList.toggle("hidden", pair.prelabel === null);
    $("prelabel").textContent = pair.prelabel === null ? "" : String(pair.prelabel);
    document.body.dataset.pair = pair.query_id + "\\t" + pair.doc_id;
  } else {
    document.body.dataset.pair = "";
  }
  if (document.body.dataset.pair !== shown) {
    // another pair: focus leaves the button pressed on the last one, so a reading key cannot press it again
    shown = document.body.dataset.pair;
    window.scrollTo(0, 0);
    $(pair ? "doc" : "done").focus({ preventScroll: true });
  }
  $("note").textContent = next.note || "";
  document.body.dataset.ready = "true";
}

async function send(path, body) {
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
      status.textContent = body === undefined ? "" : "saved";
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

function act(what, grade) {
  if (busy || !state) return;
  const pair = state.pair;
  if (what === "undo") return send("/api/undo", {});
  if (!pair) return;
  const body = { query_id: pair.query_id, doc_id: pair.doc_id };
  if (what === "skip") return send("/api/skip", body);
  body.label = grade;
  return send("/api/label", body);
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || !state) return;
  const key = event.key.toLowerCase();
  const top = state.scale[state.scale.length - 1][0];
  if (/^[0-9]$/.test(key)) {
    event.preventDefault();
    if (Number(key) <= top) act("label", Number(key));
    else if (!busy) { $("status").className = "error"; $("status").textContent = "the grades are 0 to " + top; }
  } else if (key === "s") {
    event.preventDefault();
    act("skip");
  } else if (key === "u") {
    event.preventDefault();
    act("undo");
  }
});
$("skip").addEventListener("click", () => act("skip"));
$("undo").addEventListener("click", () => act("undo"));
send("/api/state");
"""


def render_page(token: str, nonce: str, assessor: str) -> str:
    """The page for ``assessor``; ``token`` goes back with every request, ``nonce`` lets the inline style and
    script run under the page's Content-Security-Policy."""
    who = escape(assessor)
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
<body data-ready="false">
<header>
  <h1>Relevance judging</h1><span class="who">assessor <strong>{who}</strong></span>
  <div id="progress-box" aria-live="polite">
    <progress id="bar" value="0" max="1"></progress>
    <span><strong id="judged">0</strong> / <span id="budget">0</span> judged</span>
    <span><strong id="relevant">0</strong> relevant (&ge; <span id="threshold">1</span>)</span>
    <span><span id="skipped">0</span> skipped</span>
  </div>
</header>
<main>
  <div>
    <div id="pair" class="hidden">
      <section id="query-box">
        <p class="label">Query <span class="id" id="query-id"></span><span class="flag hidden" id="was-skipped">skipped
          before</span></p>
        <p id="query"></p>
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
      <p>Every pair is judged, or the budget is spent. Press <kbd>u</kbd> to take back the last label. Stop the
        server (Ctrl-C) to write <code>qrels.tsv</code> and <code>judgments.jsonl</code>.</p>
    </section>
  </div>
  <aside>
    <div>
      <p class="ask">How useful is the document to the person who typed the query? Press
        <span id="keys">0&ndash;3</span>.</p>
      <ol id="scale"></ol>
    </div>
    <div>
      <div id="actions">
        <button type="button" id="skip"><kbd>s</kbd> skip</button>
        <button type="button" id="undo"><kbd>u</kbd> undo</button>
      </div>
      <p id="prelabel-box" class="hidden">The model's label: <strong id="prelabel"></strong></p>
      <p id="status" role="status" aria-live="polite"></p>
      <p class="id" id="note"></p>
    </div>
  </aside>
</main>
<script nonce="{escape(nonce)}">{_SCRIPT}</script>
</body>
</html>
"""


__all__ = ["render_page"]
