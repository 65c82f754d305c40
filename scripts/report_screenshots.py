"""Make the report screenshots of the docs (``docs/img/report-*.png``) from real runs.

    python scripts/report_screenshots.py [--out docs/img]

Runs ``irmetrics beir`` on the shipped sample with the built-in bm25, dense and hybrid retrievers
(dense and hybrid need the ``dense`` extra), writes one report of the three runs, opens it in the
system Chromium (Playwright, never ``playwright install``) at 1280 pixels wide and takes two screenshots:
the summary with the default measures and cutoffs (its default columns and the column chooser), and the
per-query table sorted by hybrid's difference to bm25 with the first query's drill-down open.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RETRIEVERS = ("bm25", "dense", "hybrid")


def beir_runs(folder: Path) -> dict[str, Path]:
    """``{retriever: output folder of its run}`` on the shipped sample (this interpreter's CLI)."""
    out = {}
    for name in RETRIEVERS:
        target = folder / name
        cmd = [sys.executable, "-m", "haystack_irmetrics.cli", "beir", "--retriever", name, "-o", str(target)]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        out[name] = target / "sample"
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "img"), help="folder of the PNGs (default: docs/img)")
    args = p.parse_args(argv)
    from haystack_irmetrics.report import write_report
    from haystack_irmetrics.report.browser import open_report

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = beir_runs(Path(tmp))
        page_path = write_report(
            runs,
            Path(tmp) / "report.html",
            title="bm25, dense and hybrid on the shipped sample",
        )
        with open_report(page_path, viewport=(1280, 860)) as opened:
            page = opened.page
            page.screenshot(path=str(out / "report-summary.png"))
            page.select_option("#pq-measure", "NDCG@10")
            page.click("#pq th[data-sort=d2]")  # hybrid's difference to bm25, largest first
            first = page.eval_on_selector("#pq tbody tr[data-qid]", "r => r.dataset.qid")
            page.click(f'#pq tbody tr[data-qid="{first}"]')
            page.wait_for_selector(f'[data-drilldown="{first}"]')
            page.evaluate(f"document.querySelector('#pq tbody tr[data-qid=\"{first}\"]').scrollIntoView()")
            page.screenshot(path=str(out / "report-drilldown.png"))
            if opened.errors:
                raise SystemExit(f"console errors: {opened.errors}")
    print(out / "report-summary.png", out / "report-drilldown.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
