"""``benchmarks/RESULTS.md`` from the results ``run.py`` collects: the headline against the targets,
one table per workload (time, CPU, memory, each as a ratio to pytrec_eval) and the means each tool
reports."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import generate

LABELS = {
    "ours": "**haystack_irmetrics**",
    "ours_documents": "**haystack_irmetrics** (Documents)",
    "pytrec_eval": "pytrec_eval",
    "beir": "BEIR EvaluateRetrieval",
    "ranx": "ranx (warm)",
    "ir_measures": "ir_measures",
    "haystack": "Haystack built-ins (4 Document\\*Evaluators, no cutoff)",
    "haystack_per_k": "Haystack built-ins (4 Document\\*Evaluators, once per k)",
    "floor": "floor: every (doc, value) of the input dicts iterated once at C level, nothing computed",
    "floor_documents": "floor (Documents): every Document's id read once at C level, nothing computed",
}
FILE_LABELS = {
    "ours": "**irmetrics evaluate** (CLI)",
    "pytrec_eval": "pytrec_eval parse_qrel + parse_run + evaluate",
}


def _ok(r: dict[str, Any] | None) -> bool:
    return bool(r) and r.get("status") == "ok"


def _ratio(a: float | None, b: float | None, min_b: float = 0.0) -> float | None:
    if a is None or b is None or b <= min_b:
        return None
    return a / b


def _fmt(x: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return "—" if x is None else f"{x:{spec}}{suffix}"


def _secs(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def headline(data: dict[str, Any]) -> list[dict[str, Any]]:
    wl = data["workloads"]

    def tool(w: str, t: str) -> dict[str, Any] | None:
        r = wl.get(w, {}).get("tools", {}).get(t)
        return r if _ok(r) else None

    def speed(w: str, base: str, target: float, what: str) -> dict[str, Any]:
        o, b = tool(w, "ours"), tool(w, base)
        v = _ratio(o and o["min_s"], b and b["min_s"])
        rounds = ((o or {}).get("round_ratios") or {}).get(base) if b else None
        note = None
        if rounds:  # interleaved: the median of each round's ratio, steadier than a ratio of two minimums
            v = statistics.median(rounds)
            note = f"interleaved, median of {len(rounds)} rounds, {min(rounds):.3f}–{max(rounds):.3f}"
        return {
            "what": what,
            "value": v,
            "shown": _fmt(v, ".3f", "×"),
            "target": f"≤ {target}×",
            "pass": v is not None and v <= target,
            "note": note,
        }

    def memory(w: str, target: float) -> dict[str, Any]:
        o, b = tool(w, "ours"), tool(w, "pytrec_eval")
        v = _ratio(o and max(o["peak_rss_mb"], 0.0), b and b["peak_rss_mb"], 1.0)
        what = f"{w}: peak RSS above input vs pytrec_eval"
        return {
            "what": what,
            "value": v,
            "shown": _fmt(v, ".2f", "×"),
            "target": f"≤ {target}×",
            "pass": v is not None and v <= target,
        }

    rows = [
        speed("msmarco", "pytrec_eval", 0.08, "msmarco: time vs pytrec_eval"),
        speed("msmarco", "beir", 0.04, "msmarco: time vs BEIR EvaluateRetrieval"),
        speed("msmarco", "floor", 1.5, "msmarco: time vs the floor (the input dicts iterated once at C level)"),
        speed("large", "pytrec_eval", 0.12, "large: time vs pytrec_eval"),
        memory("msmarco", 0.5),
        memory("large", 0.5),
    ]
    cli, peer = tool("trecfile", "ours"), tool("trecfile", "pytrec_eval")
    v = _ratio(peer and peer["min_s"], cli and cli["min_s"])
    rows.append(
        {
            "what": "trecfile: CLI speed-up over parse_qrel + parse_run + evaluate (their time / CLI time)",
            "value": v,
            "shown": _fmt(v, ".2f", "×"),
            "target": "≥ 5×",
            "pass": v is not None and v >= 5,
        }
    )
    for w in ("trecdl", "beir"):
        h, d = tool(w, "haystack"), tool(w, "ours_documents")
        v = _ratio(h and h["min_s"], d and d["min_s"])
        row = {
            "what": f"{w}: Document path (six metrics, every k) speed-up over the four built-ins at no cutoff",
            "value": v,
            "shown": _fmt(v, ".2f", "×"),
            "target": "≥ 5×",
            "pass": v is not None and v >= 5,
        }
        if v is None:
            row["shown"] = "n/a"
            skipped = wl.get(w, {}).get("tools", {}).get("ours_documents")
            row["note"] = skipped.get("reason") if skipped else "not run"
        rows.append(row)
    imp = data.get("imports", {}).get("ours")
    v = imp["min_s"] if imp and imp.get("status") == "ok" else None
    rows.append(
        {
            "what": '`python -c "import haystack_irmetrics"` wall time',
            "value": v,
            "shown": _fmt(v, ".3f", " s"),
            "target": "≤ 0.2 s",
            "pass": v is not None and v <= 0.2,
        }
    )
    for r in rows:
        if r["value"] is None and r["shown"] != "n/a":
            r["shown"] = "not measured"
    return rows


def _mark(r: dict[str, Any]) -> str:
    if r["value"] is None:
        return "—"
    return "✅" if r["pass"] else "❌"


def _tool_rows(w: str, res: dict[str, Any]) -> list[str]:
    tools = res["tools"]
    files = w == "trecfile"
    base = tools.get("pytrec_eval")
    base_t = base["min_s"] if _ok(base) else None
    base_m = base["peak_rss_mb"] if _ok(base) else None
    rss_head = "peak RSS (MB, whole process)" if files else "peak RSS above input (MB)"
    lines = [
        f"| tool | min s | median s | min CPU s | × pytrec_eval time | {rss_head} | × pytrec_eval RSS |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in tools.items():
        label = (FILE_LABELS if files else LABELS).get(name, name)
        if not _ok(r):
            status = r.get("status", "?").upper()
            lines.append(f"| {label} | {status}: {r.get('reason', '')[:160]} | | | | | |")
            continue
        if r.get("cold_s") is not None:
            ct, cm = r["cold_s"], r.get("cold_peak_rss_mb")
            cached = (r.get("info") or {}).get("numba_cache_files")
            how = "JIT compile" if cached == 0 else f"numba cache on disk ({cached} index files)" if cached else "JIT"
            lines.append(
                f"| ranx (1st call in process: {how}) | {_secs(ct)} | — | — | {_fmt(_ratio(ct, base_t), '.2f', '×')} | "
                f"{_fmt(cm, '.0f')} | {_fmt(_ratio(cm, base_m, 1.0), '.2f', '×')} |"
            )
        t, m = r["min_s"], r["peak_rss_mb"]
        lines.append(
            f"| {label} | {_secs(t)} | {_secs(r['median_s'])} | {_secs(min(r['cpu_s']) if r.get('cpu_s') else None)} | "
            f"{_fmt(_ratio(t, base_t), '.3f', '×')} | "
            f"{_fmt(m, '.0f')} | {_fmt(_ratio(m, base_m, 1.0), '.2f', '×')} |"
        )
    return lines


def _value_rows(res: dict[str, Any], labels: dict[str, str]) -> list[str]:
    keys = ["NDCG@10", "MAP@10", "Recall@10", "P@10", "MRR@10", "R_cap@10"]
    lines = ["| tool | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for name, r in res["tools"].items():
        m = r.get("means") or {}
        if not _ok(r) or not m:
            continue
        cells = [_fmt(m.get(k), ".5f") for k in keys]
        lines.append(f"| {labels.get(name, name)} | " + " | ".join(cells) + " |")
    return lines


def _busy(data: dict[str, Any]) -> list[str]:
    """Measurements after which the 1-min load average exceeded the core count (others were running)."""
    cores = data["meta"]["cpu_count"] or 1
    out = []
    for w, res in data["workloads"].items():
        for t, r in res["tools"].items():
            la = r.get("loadavg_after")
            if la is not None and la > cores:
                out.append(f"{w}/{t} ({la:.1f})")
    return out


def write_report(data: dict[str, Any], out_dir: Path) -> Path:
    meta = data["meta"]
    lines = [
        "# Benchmark results",
        "",
        f"{meta['date']} · {meta['cpu_count']} cores ({meta['cpu_model']}) · {meta.get('memory_gib')} GiB · "
        f"Python {meta['python']} · commit {meta.get('git_commit') or 'none'}"
        + (" · package byte-compiled, as installed" if meta.get("byte_compiled") else "")
        + {True: " · compiled dict scan in use", False: " · **compiled dict scan not built: pure-Python path**"}.get(
            meta.get("compiled_scan"), ""
        )
        + (" · **QUICK smoke run (~20× smaller workloads), not the real numbers**" if meta["quick"] else ""),
        "",
        "Produced by `python benchmarks/run.py` (see `benchmarks/README.md` for what is measured and how).",
        "",
        "## Headline: haystack_irmetrics against its targets",
        "",
        "| target | measured | goal | |",
        "|---|---:|---:|---|",
    ]
    for r in headline(data):
        note = f" ({r['note']})" if r.get("note") else ""
        lines.append(f"| {r['what']}{note} | {r['shown']} | {r['target']} | {_mark(r)} |")
    lines += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()), ""]
    busy = _busy(data)
    if busy:
        lines += [
            f"**Warning: the machine was busy** (1-min load average above {meta['cpu_count']} cores after: "
            + ", ".join(busy)
            + "). Wall times there are inflated by other processes; compare the CPU-time column too.",
            "",
        ]
    for w, res in data["workloads"].items():
        spec = generate.WORKLOADS[w]
        lines += [f"## {w}", "", f"{spec.description}" + (" (quick: ~20× fewer queries)" if meta["quick"] else "")]
        if res.get("stats"):
            s = res["stats"]
            lines[-1] += f"; generated in {s.get('prepare_s', 0):.1f} s"
        ks = next((r.get("k_values") for r in res["tools"].values() if r.get("k_values")), None)
        if ks:
            lines[-1] += f"; k = {', '.join(map(str, ks))}; {meta['repeat']} timed calls per tool."
        lines += ["", *_tool_rows(w, res), ""]
        interleaved = {t: r["round_ratios"]["pytrec_eval"] for t, r in res["tools"].items()
                       if _ok(r) and "pytrec_eval" in (r.get("round_ratios") or {})}  # fmt: skip
        if interleaved:
            lines += [
                "Interleaved in one process (`--interleave`): each round's time over pytrec_eval's in the same "
                "round, median [min–max]: "
                + ", ".join(
                    f"{LABELS.get(t, t)} {statistics.median(v):.3f}× [{min(v):.3f}–{max(v):.3f}]"
                    for t, v in interleaved.items()
                )
                + ".",
                "",
            ]
        ours = res["tools"].get("ours", {})
        if ours.get("check"):
            c = ours["check"]
            verdict = "equal" if c["ok"] else "NOT equal"
            lines += [
                f"Exactness: ours' per-query NDCG/MAP/Recall/P at every k {verdict} to pytrec_eval's "
                f"({c['compared']:,} values, max |diff| {c['max_abs_diff']:.1e}, tolerance 1e-12).",
                "",
            ]
        if res.get("cli_check"):
            c = res["cli_check"]
            verdict = "equal" if c["ok"] else "NOT equal"
            lines += [f"CLI check: its means {verdict} to pytrec_eval's, rounded to 5 decimals ({c['detail']}).", ""]
        vals = _value_rows(res, FILE_LABELS if w == "trecfile" else LABELS)
        if len(vals) > 2:
            lines += ["Means at k = 10 (ties and conventions differ between tools; see README):", "", *vals, ""]
    imps = data.get("imports") or {}
    if imps:
        lines += [
            "## Import time",
            "",
            'Wall time of `python -c "import MODULE"` in a fresh process (min of 5), and which heavy modules '
            "the import pulled in.",
            "",
            "| module | min s | heavy modules imported |",
            "|---|---:|---|",
        ]
        for r in imps.values():
            name = "bare interpreter (`import sys`)" if r["module"] == "sys" else f"`{r['module']}`"
            if r.get("status") == "ok":
                heavy = ", ".join(r["heavy_modules"]) or "none"
                lines.append(f"| {name} | {r['min_s']:.3f} | {heavy} |")
            else:
                lines.append(f"| {name} | skipped: {' '.join(r.get('reason') or [])[:120]} | |")
        lines.append("")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "RESULTS.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    (out_dir / "results.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    return path
