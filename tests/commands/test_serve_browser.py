"""``tau-tui serve`` in a real browser: Debian's chromium driven by Playwright.

The test starts ``tau-tui serve`` on a free loopback port, opens the address it prints (with its
token: the page, its WebSocket and the downloads then carry the cookie it sets), and drives the app
with key presses as a person would: open a run, step through it, switch the side tabs, fetch
the simulation JSON and the notes export (browser downloads), go back, quit. What the page's terminal shows is read
row by row from the xterm.js terminal in the page: textual-serve renders on a canvas, so the
test exposes the page's ``Terminal`` object (one assignment added to textual-serve's script as
the browser fetches it) and reads its buffer. Screenshots of the runs screen and of a
trajectory are saved in the test's temporary folder (the paths are printed).

Skipped, with the reason, where playwright, textual-serve or a chromium binary is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import CORPUS, ROOT
from tests.helpers import served_address, stop_process, wait_for_port

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

RECORDINGS = ROOT / "tests" / "fixtures" / "mock_recordings"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOTE_TEXT = "served notes export check"
TERMINAL_HOOK = re.compile(r"this\.terminal=new (\w+)\.Terminal\(")
ROWS_JS = """() => {
  const t = window.__tauTerminal;
  if (!t) return null;
  const rows = [];
  for (let y = 0; y < t.rows; y++) {
    const line = t.buffer.active.getLine(y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows;
}"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``tau-tui serve`` on the mock recordings, on a free loopback port; yields its URL."""
    pytest.importorskip("textual_serve", reason="the 'serve' extra (textual-serve) is not installed")
    if not CORPUS.is_dir():
        pytest.skip(f"the tau2 corpus is missing at {CORPUS}")
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TAU2_DATA_DIR=str(CORPUS), TMPDIR=str(tmp_path))
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(RECORDINGS / "mock_demo.json", runs)  # a copy: its notes sidecar is written beside it
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui",
            "notes",
            "add",
            str(runs / "mock_demo.json"),
            "--sim",
            "demo-mismatch",
            "--source",
            "agent",
            "--type",
            "tool_bug",
            "--text",
            NOTE_TEXT,
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "tau_tui", "serve", "--port", str(port), str(runs)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        address = served_address(server)  # the address with this launch's token, as a person copies it
        wait_for_port(port, server)
        yield address
    finally:
        stop_process(server)


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[Page]:
    """A fresh headless chromium (its own user-data dir) with one page whose terminal the test can read."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python package) is not installed")
    executable = chromium()
    if executable is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=executable,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 900},
            accept_downloads=True,
        )
        try:

            def expose_terminal(route: Route) -> None:
                response = route.fetch()
                script, count = TERMINAL_HOOK.subn(
                    r"this.terminal=window.__tauTerminal=new \1.Terminal(", response.text()
                )
                assert count == 1, "textual-serve's script no longer creates its terminal as the test expects"
                route.fulfill(response=response, body=script)

            context.route("**/static/js/textual.js", expose_terminal)
            page = context.pages[0] if context.pages else context.new_page()
            yield page
        finally:
            context.close()


def screen_rows(page: Page) -> list[str]:
    rows: list[str] = page.evaluate(ROWS_JS) or []
    return rows


def wait_for_text(page: Page, pattern: str, what: str, timeout: float = 60.0) -> list[str]:
    """Poll the terminal's rows until one matches ``pattern`` (a regex); returns the rows."""
    deadline = time.monotonic() + timeout
    rows: list[str] = []
    while time.monotonic() < deadline:
        rows = screen_rows(page)
        if any(re.search(pattern, row) for row in rows):
            return rows
        page.wait_for_timeout(100)
    shown = "\n".join(rows)
    raise AssertionError(f"timed out waiting for {what} ({pattern!r}); the terminal shows:\n{shown}")


def test_served_app_in_chromium_opens_a_run_steps_switches_tabs_downloads_and_quits(
    served: str, browser_page: Page, tmp_path: Path
) -> None:
    page = browser_page
    page.goto(served, wait_until="domcontentloaded")
    # the first visit sets the cookie and moves on to the page without the token in the address bar
    page.wait_for_url(served.split("?")[0], timeout=30_000)
    page.wait_for_selector("body.-first-byte", timeout=60_000)
    # the runs screen, once the background replay has filled the derived columns (db* ✗ for the user-tools run)
    rows = wait_for_text(page, r"5 of 5 simulations", "the runs screen")
    wait_for_text(page, r"demo-user-tools .*✗", "the replayed runs")
    runs_shot = tmp_path / "served-runs.png"
    page.screenshot(path=str(runs_shot))
    page.locator(".xterm-helper-textarea").focus()

    # open the first run (the cursor starts on it) and step through it
    page.keyboard.press("Enter")
    rows = wait_for_text(page, r"step 0/7 · assistant", "the trajectory screen on its first message")
    assert not any("5 of 5 simulations" in row for row in rows), "still on the runs screen"
    assert any("update_task_status(task_id=task_1, status=completed)" in row for row in rows)
    page.keyboard.press("j")
    wait_for_text(page, r"step 1/7 · user", "one step down")
    page.keyboard.press("j")
    wait_for_text(page, r"step 2/7 · assistant", "two steps down")

    # switch the side tabs: task (2), reward (3)
    page.keyboard.press("2")
    wait_for_text(page, r"Request that", "the task tab's instructions")
    page.keyboard.press("3")
    rows = wait_for_text(page, r"AS RECORDED", "the reward tab")
    assert any("strict replay (as tau2 would) ✓" in row for row in rows)
    trajectory_shot = tmp_path / "served-trajectory.png"
    page.screenshot(path=str(trajectory_shot))

    # the simulation's JSON reaches the browser as a download, not an editor on the server
    # (textual-serve opens the download's one-time URL in a new tab; chromium reports it on this page)
    with page.expect_download(timeout=30_000) as download_info:
        page.keyboard.press("E")
    download = download_info.value
    assert download.suggested_filename == "demo-clean-pass.json"
    saved = tmp_path / "download.json"
    download.save_as(str(saved))
    simulation = json.loads(saved.read_text())
    assert simulation["id"] == "demo-clean-pass" and simulation["task_id"] == "update_task_1"

    # back to the runs screen
    page.locator(".xterm-helper-textarea").focus()
    page.keyboard.press("Escape")
    wait_for_text(page, r"5 of 5 simulations", "the runs screen again")
    # the notes export is a download too (the server's folders are not the browser user's)
    page.keyboard.press("N")
    wait_for_text(page, NOTE_TEXT, "the notes screen")
    page.keyboard.press("e")
    wait_for_text(page, r"JSON  ·  one object per note", "the export format picker")
    with page.expect_download(timeout=30_000) as download_info:
        page.keyboard.press("Enter")
    download = download_info.value
    assert re.fullmatch(r"notes_\d{8}_\d{6}\.json", download.suggested_filename), download.suggested_filename
    download.save_as(str(tmp_path / "notes.json"))
    notes = json.loads((tmp_path / "notes.json").read_text())
    assert [(n["sim_id"], n["text"]) for n in notes] == [("demo-mismatch", NOTE_TEXT)]
    assert not list((tmp_path / "runs").glob("notes_*")), "served, the export must not land in the server's folder"
    page.keyboard.press("Escape")
    wait_for_text(page, r"5 of 5 simulations", "the runs screen after the notes")
    page.keyboard.press("q")
    page.wait_for_selector("body.-closed", timeout=30_000)
    print(f"\nscreenshots: {runs_shot} {trajectory_shot}")
    assert runs_shot.stat().st_size > 10_000 and trajectory_shot.stat().st_size > 10_000


FOREIGN_PAGE = "https://elsewhere.example/"
OPEN_WEBSOCKET_JS = """(url) => new Promise((resolve) => {
  const socket = new WebSocket(url);
  socket.onopen = () => { socket.close(); resolve("open"); };
  socket.onerror = () => resolve("refused");
})"""


def test_a_link_on_another_site_opens_the_app_but_that_sites_page_cannot_open_its_websocket(
    served: str, browser_page: Page, tmp_path: Path
) -> None:
    """The printed address pasted into another site's page (a chat, a wiki) still opens the app: the cookie is
    set and sent although another site started the navigation. That site's own script, and this server's
    WebSocket opened from it, are refused: the browser sends that site's Origin."""
    page = browser_page
    port = served.split(":")[2].split("/")[0]
    page.route(
        FOREIGN_PAGE,
        lambda route: route.fulfill(content_type="text/html", body=f'<a id="go" href="{served}">the app</a>'),
    )
    page.goto(FOREIGN_PAGE)
    assert page.evaluate(OPEN_WEBSOCKET_JS, f"ws://127.0.0.1:{port}/ws") == "refused"
    page.click("#go")
    page.wait_for_url(f"http://127.0.0.1:{port}/", timeout=30_000)
    page.wait_for_selector("body.-first-byte", timeout=60_000)
    wait_for_text(page, r"5 of 5 simulations", "the runs screen, opened from another site's link")
    page.goto(FOREIGN_PAGE)  # back on the other site, with the cookie set in this browser
    assert page.evaluate(OPEN_WEBSOCKET_JS, f"ws://127.0.0.1:{port}/ws") == "refused"
    assert page.evaluate(OPEN_WEBSOCKET_JS, f"ws://localhost:{port}/ws") == "refused"
