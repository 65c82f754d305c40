"""Open a report page in a real browser, for tests of reports (ours and users'): a system Chromium
(Debian's ``chromium`` package) driven by Playwright for Python, never ``playwright install``.

Usage (needs ``pip install playwright`` and ``apt-get install chromium``)::

    from haystack_irmetrics.report.browser import open_report

    with open_report("report.html") as opened:
        page = opened.page
        value = page.get_attribute('#means td[data-run="dense"][data-measure="NDCG@10"]', "data-value")
        assert opened.errors == [] and opened.external_requests() == []
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._extras import require

#: Chromium's flags for every launch: headless, no sandbox (root in containers), no GPU, nothing
#: fetched in the background.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)


def chromium() -> str | None:
    """The system Chromium's path (``chromium`` on PATH), or None."""
    return shutil.which("chromium")


@dataclass
class OpenedReport:
    """A loaded report page (``page``: Playwright's ``Page``) with the console errors and uncaught
    exceptions (``errors``) and the URLs it requested (``requests``) so far."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def external_requests(self) -> list[str]:
        """Requests for anything but the file itself and inline ``data:`` URLs."""
        return [u for u in self.requests if not u.startswith(("file:", "data:"))]


@contextmanager
def open_report(
    path: str | os.PathLike[str],
    *,
    viewport: tuple[int, int] = (1400, 1000),
    executable: str | None = None,
    timeout_s: float = 60.0,
) -> Iterator[OpenedReport]:
    """Launch Chromium, load the page at ``path`` and wait until its script has drawn the table
    (``<body data-ready="true">``); closes the browser on exit."""
    require("playwright", purpose="opening reports in a browser")
    from playwright.sync_api import sync_playwright

    executable = executable or chromium()
    if executable is None:
        from ..errors import MissingDependencyError

        raise MissingDependencyError("no chromium on PATH: install it (Debian: apt-get install -y chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=list(CHROMIUM_FLAGS))
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            opened = OpenedReport(page)
            page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: opened.errors.append(str(e)))
            page.on("request", lambda r: opened.requests.append(r.url))
            page.goto(Path(path).resolve().as_uri(), timeout=timeout_s * 1000)
            page.wait_for_selector("body[data-ready=true]", timeout=timeout_s * 1000)
            yield opened
        finally:
            browser.close()


__all__ = ["CHROMIUM_FLAGS", "OpenedReport", "chromium", "open_report"]
