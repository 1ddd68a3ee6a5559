"""``tau-tui report`` opened in a real browser: Debian's chromium driven by Playwright, from ``file://``.

Every request the pages make is recorded (none may leave ``file://``), console errors and page errors fail the
test, each chart must have drawn marks, every run's label is on the index, and a simulation page is reached
by clicking its link in the task matrix.

Skipped, with the reason, where playwright or a chromium binary is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.cli import main
from tests.commands.test_cli_report import CHARTS, scripted_runs

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
LABELS = ("scripted/gold (gold.json)", "scripted/flaky:0.5 (flaky5.json)", "scripted/flaky:0.3 (flaky3.json)")


@pytest.fixture
def written(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The report of three scripted runs (made before the browser starts: Playwright runs an event loop)."""
    runs = scripted_runs(tmp_path, tau2_data)
    out = tmp_path / "report"
    assert main(["report", "--tau2-data", str(tau2_data), *map(str, runs), "--out", str(out)]) == 0
    capsys.readouterr()
    return out


@pytest.fixture
def browser(tmp_path: Path, written: Path) -> Iterator[BrowserContext]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python package) is not installed")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=executable, headless=True, args=FLAGS
        )
        try:
            yield context
        finally:
            context.close()


# The texts of a chart that reach past its edges, as the browser lays them out.
CUT_TEXTS = """(kind) => {
  const chart = document.querySelector(`svg.chart[data-chart="${kind}"]`);
  const box = chart.getBoundingClientRect();
  return [...chart.querySelectorAll("text")]
    .filter((t) => { const b = t.getBoundingClientRect(); return b.left < box.left - 1 || b.right > box.right + 1; })
    .map((t) => t.textContent);
}"""


def test_report_opens_offline_with_its_charts_labels_and_simulation_pages(
    written: Path, browser: BrowserContext
) -> None:
    out = written
    requests, problems = [], []
    browser.on("request", lambda request: requests.append(request.url))
    page = browser.pages[0] if browser.pages else browser.new_page()
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto((out / "index.html").as_uri())
    page.wait_for_load_state("load")
    for chart in CHARTS:
        svg = page.locator(f'svg.chart[data-chart="{chart}"]')
        assert svg.count() == 1, chart
        assert svg.locator(".mark").count() > 0, f"{chart}: nothing drawn"
        box = svg.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 50, chart
        cut = page.evaluate(CUT_TEXTS, chart)  # measured by the browser: every label drawn inside its chart
        assert cut == [], (chart, cut)
    body = page.inner_text("body")
    for label in LABELS:
        assert label in body
    assert page.locator('svg.chart[data-chart="cost-score"] .pareto').count() >= 1
    link = page.locator("td.reg a").first  # a regression in the task matrix: that run's simulation of the task
    task = link.locator("xpath=ancestor::tr/td[1]").inner_text()
    link.click()
    page.wait_for_load_state("load")
    assert "/sims/" in page.url and page.locator("h1").inner_text().startswith(task)
    assert page.locator("h2", has_text="Reward explained").count() == 1
    page.locator("text=all simulations of this run").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("page-1.html") and page.locator("table a").count() == 20
    page.go_back()
    page.go_back()
    assert page.url.endswith("index.html")
    assert requests and all(url.startswith("file://") for url in requests), [u for u in requests if "file" not in u]
    assert problems == []
