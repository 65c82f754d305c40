"""Time haystack_irmetrics side by side with pytrec_eval, BEIR, ranx, ir_measures and Haystack.

One command::

    python benchmarks/run.py [--workloads msmarco,trecdl,beir,large,trecfile] [--repeat 3]
                             [--tools ours,pytrec_eval,beir,ranx,ir_measures,haystack] [--quick]

Every (workload, tool) pair runs in its own subprocess (this file with ``--worker``), so memory,
imports and JIT state are isolated.  The parent writes ``benchmarks/RESULTS.md`` and
``benchmarks/results.json`` (``--quick`` writes them under the cache dir instead, so a smoke run never
overwrites the real results; ``--out-dir`` chooses another place).  See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import gc
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import runners  # noqa: E402
from results_md import _ok, write_report  # noqa: E402

DICT_TOOLS = ["pytrec_eval", "ours", "beir", "ranx", "ir_measures", "floor"]
HAYSTACK_TOOLS = ["haystack", "haystack_per_k", "ours_documents", "floor_documents"]
HAYSTACK_WORKLOADS = {"trecdl", "beir"}
FILE_TOOLS = ["pytrec_eval", "ours"]
ALL_TOOLS = [*DICT_TOOLS, *HAYSTACK_TOOLS]
HEAVY_MODULES = ["haystack", "pandas", "scipy", "pyarrow", "torch"]
IMPORTS = {
    "ours": "haystack_irmetrics",
    "pytrec_eval": "pytrec_eval",
    "beir": "beir.retrieval.evaluation",
    "ranx": "ranx",
    "ir_measures": "ir_measures",
    "haystack": "haystack.components.evaluators",
}
PACKAGES = [
    "haystack-irmetrics",
    "numpy",
    "pytrec-eval-terrier",
    "beir",
    "ranx",
    "numba",
    "ir-measures",
    "haystack-ai",
]
# --------------------------------------------------------------------------- memory helpers


def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_mb() -> float:
    kb = _status_kb("VmRSS")
    if kb is None:  # no /proc: fall back to the peak, the best we have
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024


def hwm_mb() -> float:
    kb = _status_kb("VmHWM")
    if kb is None:
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024


def reset_hwm() -> bool:
    """Reset the RSS high-water mark to the current RSS (Linux >= 4.0); False if not permitted."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------- worker (in-memory)


def _loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _summary(times: list[float]) -> dict[str, Any]:
    return {"min_s": min(times), "median_s": statistics.median(times), "times_s": times}


def worker_dict(tool: str, workload: str, repeat: int, seed: int, quick: bool, cache: str) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": tool, "workload": workload}
    t0 = time.perf_counter()
    qrels, results = generate.load(workload, seed, quick, cache)
    out["load_s"] = time.perf_counter() - t0
    ks = runners.ks_for_depth(generate.depth(workload))
    out["k_values"] = ks
    try:
        prep = runners.prepare(tool, qrels, results, ks)
    except runners.Unavailable as e:
        return {**out, "status": "skipped", "reason": str(e)}
    out["info"] = prep.info
    arg = prep.setup() if prep.setup else None
    gc.collect()
    baseline = rss_mb()
    out["baseline_rss_mb"] = baseline

    cpu: list[float] = []

    def timed() -> tuple[float, float, Any]:
        gc.collect()
        reset_hwm()
        c = time.process_time()
        t = time.perf_counter()
        res = prep.call(arg)
        dt = time.perf_counter() - t
        cpu.append(time.process_time() - c)
        return dt, hwm_mb() - baseline, res

    out["hwm_reset"] = reset_hwm()
    out["loadavg_before"] = _loadavg()
    if prep.info.get("cold_call"):
        dt, peak, res = timed()
        out["cold_s"], out["cold_peak_rss_mb"] = dt, peak
        del res
        if prep.setup:
            del arg
            gc.collect()
            arg = prep.setup()
    times: list[float] = []
    peaks: list[float] = []
    res = None
    for i in range(repeat):
        if i and prep.setup:
            del arg
            gc.collect()
            arg = prep.setup()
        res = None  # free the previous call's output before the next call
        dt, peak, res = timed()
        times.append(dt)
        peaks.append(peak)
    out.update(_summary(times))
    out["cpu_s"] = cpu[-repeat:]
    out["loadavg_after"] = _loadavg()
    out["peak_rss_mb"] = max(peaks)
    out["peaks_rss_mb"] = peaks
    if not out["hwm_reset"]:  # peak over the whole process life, minus the baseline
        out["peak_rss_mb"] = hwm_mb() - baseline
    out["means"] = prep.means(res) if prep.means else {}
    out["status"] = "ok"
    if tool == "ours":
        _check_ours(out, runners.pytrec_reference(qrels, results, ks), res, ks)
    return out


def _check_ours(out: dict[str, Any], reference: dict[str, dict[str, float]], res: Any, ks: list[int]) -> None:
    """Ours' per-query values against pytrec_eval's (outside the timed region): a mismatch voids the timing."""
    check = runners.compare_with_pytrec(res.per_query, reference, ks)
    out["check"] = check
    if not check["ok"]:
        out["status"] = "mismatch"
        out["reason"] = "per-query values differ from pytrec_eval: " + "; ".join(check["mismatches"])


def worker_interleaved(tools: list[str], workload: str, repeat: int, seed: int, quick: bool, cache: str) -> dict:
    """``--interleave``: every tool in this one process, their timed calls alternating, ``repeat`` rounds (the
    order rotates each round), so that other work on a shared machine weighs on every tool alike. Each tool's
    result is ``worker_dict``'s, plus ``round_ratios``: its time over each other tool's in the same round."""
    qrels, results = generate.load(workload, seed, quick, cache)
    ks = runners.ks_for_depth(generate.depth(workload))
    out: dict[str, dict[str, Any]] = {}
    preps: dict[str, runners.Prepared] = {}
    for tool in tools:
        out[tool] = {"tool": tool, "workload": workload, "k_values": ks, "interleaved": True}
        try:
            preps[tool] = runners.prepare(tool, qrels, results, ks)
        except runners.Unavailable as e:
            out[tool].update(status="skipped", reason=str(e))
            continue
        out[tool]["info"] = preps[tool].info
    timed: dict[str, list[float]] = {t: [] for t in preps}
    cpu: dict[str, list[float]] = {t: [] for t in preps}
    peaks: dict[str, list[float]] = {t: [] for t in preps}
    last: dict[str, Any] = {}
    hwm_reset = reset_hwm()
    loadavg_before = _loadavg()
    names = list(preps)
    for i in range(repeat + 1):  # round 0 is each tool's first call (ranx's JIT or its numba cache), not timed
        for tool in names[i % len(names) :] + names[: i % len(names)]:
            prep = preps[tool]
            arg = prep.setup() if prep.setup else None
            last.pop(tool, None)
            gc.collect()
            base = rss_mb()
            reset_hwm()
            c, t = time.process_time(), time.perf_counter()
            res = prep.call(arg)
            dt = time.perf_counter() - t
            if i == 0:
                if prep.info.get("cold_call"):
                    out[tool]["cold_s"], out[tool]["cold_peak_rss_mb"] = dt, hwm_mb() - base
                continue
            cpu[tool].append(time.process_time() - c)
            peaks[tool].append(hwm_mb() - base)
            timed[tool].append(dt)
            last[tool] = res
            del arg
    for tool in preps:
        r = out[tool]
        r.update(_summary(timed[tool]), cpu_s=cpu[tool], peaks_rss_mb=peaks[tool], peak_rss_mb=max(peaks[tool]))
        r.update(hwm_reset=hwm_reset, loadavg_before=loadavg_before, loadavg_after=_loadavg(), status="ok")
        r["round_ratios"] = {o: [a / b for a, b in zip(timed[tool], timed[o])] for o in preps if o != tool}
        r["means"] = preps[tool].means(last[tool]) if preps[tool].means else {}
    if "ours" in preps:
        _check_ours(out["ours"], runners.pytrec_reference(qrels, results, ks), last["ours"], ks)
    return out


# --------------------------------------------------------------------------- worker (TREC files)


def _cli_command() -> list[str]:
    # The console script installed beside this interpreter first: a `which` hit may be a version
    # manager's shim (pyenv's adds ~50 ms of bash and `pyenv exec` to every call).
    beside = Path(sys.executable).parent / "irmetrics"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    exe = shutil.which("irmetrics")
    if exe:
        return [exe]
    import importlib.util

    try:
        for mod in ("haystack_irmetrics.__main__", "haystack_irmetrics.cli"):
            if importlib.util.find_spec(mod) is not None:
                return [sys.executable, "-m", mod.removesuffix(".__main__")]
    except ImportError as e:
        raise runners.Unavailable(f"haystack_irmetrics is not importable ({e})") from e
    raise runners.Unavailable("no `irmetrics` executable and no haystack_irmetrics.__main__ / .cli module")


def _run_child(cmd: list[str], stdout_path: str) -> tuple[float, float, float, int, str]:
    """Run cmd, return (wall s, child's CPU s, child's peak RSS MB, exit code, stderr tail)."""
    with open(stdout_path, "wb") as so, tempfile.TemporaryFile() as se:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=so, stderr=se, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        se.seek(0)
        err = se.read().decode(errors="replace")[-2000:]
    return dt, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, p.returncode, err


def _find_means(obj: Any) -> dict[str, float] | None:
    """The first dict in a JSON document that has an "NDCG@10"-style key with a number."""
    if isinstance(obj, dict):
        if any(k.startswith("NDCG@") and isinstance(v, int | float) for k, v in obj.items()):
            return {k: float(v) for k, v in obj.items() if isinstance(v, int | float)}
        for v in obj.values():
            found = _find_means(v)
            if found:
                return found
    elif isinstance(obj, list):
        for v in obj:
            found = _find_means(v)
            if found:
                return found
    return None


def worker_files(tool: str, repeat: int, seed: int, quick: bool, cache: str) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": tool, "workload": "trecfile"}
    qrels_path, run_path = generate.trec_files(seed, quick, cache)
    ks = runners.ks_for_depth(generate.depth("trecfile"))
    kk = ",".join(map(str, ks))
    out["k_values"] = ks
    with open(run_path, "rb") as f:
        out["run_lines"] = sum(1 for _ in f)
    try:
        if tool == "ours":
            cmd = [*_cli_command(), "evaluate", str(qrels_path), str(run_path), "-k", kk, "--format", "json"]
        elif tool == "pytrec_eval":
            cmd = [sys.executable, str(HERE / "runners.py"), "pytrec-files", str(qrels_path), str(run_path), "-k", kk]
        else:
            raise runners.Unavailable(f"{tool} has no TREC-file runner")
    except runners.Unavailable as e:
        return {**out, "status": "skipped", "reason": str(e)}
    out["command"] = " ".join(cmd)
    times, cpu, peaks = [], [], []
    out["loadavg_before"] = _loadavg()
    with tempfile.TemporaryDirectory() as td:
        stdout_path = os.path.join(td, "stdout")
        for _ in range(repeat):
            dt, c, peak, rc, err = _run_child(cmd, stdout_path)
            if rc != 0:
                return {**out, "status": "error", "reason": f"exit code {rc}: {err.strip()[-500:]}"}
            times.append(dt)
            cpu.append(c)
            peaks.append(peak)
        text = Path(stdout_path).read_text(encoding="utf-8", errors="replace")
    out.update(_summary(times))
    out["cpu_s"] = cpu
    out["loadavg_after"] = _loadavg()
    out["peak_rss_mb"] = max(peaks)  # whole child process: there is no input in memory before it starts
    out["rss_is_absolute"] = True
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    out["means"] = _find_means(doc) or {}
    if tool == "pytrec_eval" and isinstance(doc, dict):
        out["inner_s"] = doc.get("inner_seconds")
    out["status"] = "ok"
    return out


def worker_main(args: argparse.Namespace) -> int:
    import warnings

    warnings.simplefilter("ignore")
    try:
        if args.worker == "interleaved":
            tools = [t for t in args.tools.split(",") if t]
            res = worker_interleaved(tools, args.workload, args.repeat, args.seed, args.quick, args.cache_dir)
        elif args.workload == "trecfile":
            res = worker_files(args.worker, args.repeat, args.seed, args.quick, args.cache_dir)
        else:
            res = worker_dict(args.worker, args.workload, args.repeat, args.seed, args.quick, args.cache_dir)
    except Exception as e:  # report, never hang the parent
        import traceback

        res = {
            "tool": args.worker,
            "workload": args.workload,
            "status": "error",
            "reason": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc()[-3000:],
        }
    Path(args.result_file).write_text(json.dumps(res, default=str), encoding="utf-8")
    return 0


# --------------------------------------------------------------------------- parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _spawn_worker(
    tool: str, workload: str, args: argparse.Namespace, timeout: float, tools: list[str] | None = None
) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tf:
        result_file = tf.name
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        tool,
        "--workloads",
        workload,
        "--repeat",
        str(args.repeat),
        "--seed",
        str(args.seed),
        "--cache-dir",
        str(args.cache_dir),
        "--result-file",
        result_file,
    ]
    if args.quick:
        cmd.append("--quick")
    if tools:
        cmd += ["--tools", ",".join(tools)]
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        text = Path(result_file).read_text(encoding="utf-8") if os.path.getsize(result_file) else ""
        if text:
            res = json.loads(text)
        else:
            res = {"status": "error", "reason": f"worker died (exit {p.returncode}): {p.stderr.strip()[-800:]}"}
    except subprocess.TimeoutExpired:
        res = {"status": "timeout", "reason": f"no result within {timeout:.0f} s"}
    finally:
        os.unlink(result_file)
    res.setdefault("tool", tool)
    res.setdefault("workload", workload)
    res["subprocess_wall_s"] = time.perf_counter() - t
    return res


def _byte_compile_ours() -> bool:
    """Byte-compile the package as ``pip install`` does for an installed one, so that every timed
    process imports it from ``__pycache__``. A work tree run with ``PYTHONDONTWRITEBYTECODE=1`` (set
    on some machines) would otherwise compile every module from source in every process, ~25 ms of
    the import and ~60 ms of each CLI call that no installed copy pays; the peers are installed
    packages, already compiled."""
    package = ROOT / "haystack_irmetrics"
    return package.is_dir() and bool(compileall.compile_dir(str(package), quiet=2))


def _compiled_scan() -> bool | None:
    """Whether ``ours`` runs with the compiled dict scan (``core/_rank.c``), as the timed processes see it."""
    code = "from haystack_irmetrics.core.native import scan; print(scan() is not None)"
    p = subprocess.run([sys.executable, "-c", code], env=_env(), cwd=ROOT, capture_output=True, text=True)
    return {"True": True, "False": False}.get(p.stdout.strip())


def _import_time(module: str, n: int = 5) -> dict[str, Any]:
    code = (
        "import importlib, json, sys; importlib.import_module(sys.argv[1]); "
        f"print(json.dumps(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules)))"
    )
    p = subprocess.run([sys.executable, "-c", code, module], env=_env(), cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        return {"module": module, "status": "skipped", "reason": p.stderr.strip().splitlines()[-1:]}
    heavy = json.loads(p.stdout)
    walls = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], env=_env(), cwd=ROOT, check=True)
        walls.append(time.perf_counter() - t)
    return {"module": module, "status": "ok", "min_s": min(walls), "times_s": walls, "heavy_modules": heavy}


def _imports(tools: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"python -c pass": _import_time("sys")}
    for tool, module in IMPORTS.items():
        if tool in tools or tool == "ours":
            out[tool] = _import_time(module)
    return out


def _tools_for(workload: str, tools: list[str]) -> list[str]:
    if workload == "trecfile":
        return [t for t in FILE_TOOLS if t in tools]
    chosen = [t for t in DICT_TOOLS if t in tools]
    if workload in HAYSTACK_WORKLOADS:
        chosen += [
            t
            for t in HAYSTACK_TOOLS
            if t in tools
            or (t == "ours_documents" and "ours" in tools)
            or (t == "haystack_per_k" and "haystack" in tools)
            or (t == "floor_documents" and "floor" in tools)
        ]
    return chosen


def _meta(args: argparse.Namespace) -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        cpu = platform.processor() or cpu
    versions = {}
    for pkg in PACKAGES:
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = "not installed"
    mem_gib = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "haystack_irmetrics"], cwd=ROOT, capture_output=True, text=True
    )
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu,
        "memory_gib": round(mem_gib, 1) if mem_gib else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
        "git_commit": (commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")) or None,
        "repeat": args.repeat,
        "seed": args.seed,
        "quick": args.quick,
    }


def _cli_check(tools: dict[str, Any]) -> dict[str, Any] | None:
    """Do the CLI's printed means equal pytrec_eval's (both rounded to 5 decimals) for NDCG/MAP/Recall/P?"""
    cli, peer = tools.get("ours"), tools.get("pytrec_eval")
    if not (_ok(cli) and _ok(peer)):
        return None
    want = peer.get("means") or {}
    got = cli.get("means") or {}
    if not got:
        return {"ok": False, "detail": "no NDCG@k means found in the CLI's JSON output"}
    bad = [f"{k}: CLI {got.get(k)} vs {v}" for k, v in want.items() if got.get(k) is None or abs(got[k] - v) > 1e-9]
    detail = f"{len(want)} means compared" if not bad else "; ".join(bad[:5])
    return {"ok": not bad, "detail": detail}


def _line(r: dict[str, Any]) -> str:
    if not _ok(r):
        return f"{r.get('status', '?')}: {r.get('reason', '')}"[:300]
    s = f"min {r['min_s']:.3f} s, median {r['median_s']:.3f} s, peak RSS {r['peak_rss_mb']:.0f} MB"
    if r.get("cold_s") is not None:
        s += f", 1st call {r['cold_s']:.3f} s"
    if r.get("check"):
        s += ", exact vs pytrec_eval" if r["check"]["ok"] else ", MISMATCH vs pytrec_eval"
    ratios = (r.get("round_ratios") or {}).get("pytrec_eval")
    if ratios:
        s += f", × pytrec_eval per round: median {statistics.median(ratios):.3f} [{min(ratios):.3f}–{max(ratios):.3f}]"
    return s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default=",".join(generate.WORKLOADS), help="comma-separated (default: all)")
    p.add_argument("--tools", default=",".join(ALL_TOOLS), help="comma-separated (default: all)")
    p.add_argument("--repeat", type=int, default=3, help="timed calls per tool (at least 3)")
    p.add_argument("--quick", action="store_true", help="~20x smaller workloads: a smoke run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache-dir", default=None, help="default: $IRMETRICS_BENCH_CACHE or benchmarks/.cache")
    p.add_argument("--out-dir", default=None, help="default: benchmarks/ (with --quick: CACHE_DIR/quick)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per tool subprocess")
    p.add_argument("--no-imports", action="store_true", help="skip the import-time measurements")
    p.add_argument(
        "--interleave",
        action="store_true",
        help="dict workloads: the tools in one process, their timed calls alternating (a shared, noisy machine)",
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeat < 3:
        p.error("--repeat must be at least 3")
    args.cache_dir = str(generate.cache_dir(args.cache_dir))
    if args.worker:
        args.workload = args.workloads
        return worker_main(args)

    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [w for w in workloads if w not in generate.WORKLOADS] + [t for t in tools if t not in ALL_TOOLS]
    if bad:
        p.error(f"unknown workload/tool: {', '.join(bad)}")
    out_dir = Path(args.out_dir) if args.out_dir else (Path(args.cache_dir) / "quick" if args.quick else HERE)

    data: dict[str, Any] = {"meta": _meta(args), "workloads": {}, "imports": {}}
    data["meta"]["byte_compiled"] = _byte_compile_ours()
    data["meta"]["compiled_scan"] = _compiled_scan()
    print(
        f"{data['meta']['cpu_count']} cores, {data['meta']['cpu_model']}, Python {data['meta']['python']}", flush=True
    )
    if not args.no_imports:
        data["imports"] = _imports(tools)
        for name, r in data["imports"].items():
            shown = f"{r['min_s']:.3f} s, heavy: {r['heavy_modules']}" if r.get("status") == "ok" else r.get("reason")
            print(f"import {name}: {shown}", flush=True)
    for w in workloads:
        t = time.perf_counter()
        gen = [sys.executable, str(HERE / "generate.py"), w, "--seed", str(args.seed), "--cache-dir", args.cache_dir]
        subprocess.run(gen + (["--quick"] if args.quick else []), check=True, capture_output=True, env=_env())
        entry: dict[str, Any] = {"stats": {"prepare_s": time.perf_counter() - t}, "tools": {}}
        data["workloads"][w] = entry
        print(f"== {w} (ready in {entry['stats']['prepare_s']:.1f} s)", flush=True)
        chosen = _tools_for(w, tools)
        if args.interleave and w != "trecfile":
            together = [t for t in chosen if t in DICT_TOOLS]
            r = _spawn_worker("interleaved", w, args, args.timeout, together)
            for tool in together:  # a worker that failed as a whole fails every tool
                entry["tools"][tool] = r.get(tool) or {**r, "tool": tool}
            chosen = [t for t in chosen if t not in together]
        for tool in chosen:
            entry["tools"][tool] = _spawn_worker(tool, w, args, args.timeout)
        for tool, r in entry["tools"].items():
            print(f"   {tool:>14}: {_line(r)}", flush=True)
        if w == "trecfile":
            entry["cli_check"] = _cli_check(entry["tools"])
    path = write_report(data, out_dir)
    print(f"wrote {path} and {path.with_name('results.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
