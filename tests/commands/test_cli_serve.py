"""``tau-tui serve``: loopback unless told otherwise, one-line errors, the command each browser tab runs.

The app in a real browser is tests/commands/test_serve_browser.py.
"""

from __future__ import annotations

import http.cookiejar
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.commands.serve import app_command, is_loopback
from tests.conftest import CORPUS, ROOT
from tests.helpers import served_address

RECORDINGS = ROOT / "tests" / "fixtures" / "mock_recordings"


@pytest.mark.parametrize(
    "host, loopback",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_network_host_without_allow_network_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", str(RECORDINGS)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "--host 0.0.0.0: not a loopback address" in err and "--allow-network" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--port", "0"], "--port 0: not a port number"),
        (["--port", "70000"], "--port 70000: not a port number"),
        (["no/such/file.json"], "no/such/file.json: does not exist"),
        (["--public-url", "example.org:8000"], "--public-url example.org:8000: not an http:// or https:// URL"),
    ],
)
def test_bad_arguments_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_without_the_serve_extra_the_message_is_one_line() -> None:
    probe = (
        "import sys; sys.modules['textual_serve'] = None; sys.modules['textual_serve.server'] = None\n"
        "from tau_tui.cli import main\nraise SystemExit(main(['serve']))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "serving needs the 'serve' extra" in proc.stderr


class BannerFirst:
    """textual-serve's ``Server`` as it behaves: the banner is printed, then the port is bound."""

    def __init__(self, command: str, host: str, port: int, **kwargs: Any) -> None:
        self.host, self.port = host, port

    def serve(self) -> None:
        print(f"Serving on http://{self.host}:{self.port}\nPress Ctrl+C to quit")
        raise OSError(98, f"error while attempting to bind on address ({self.host!r}, {self.port}): address in use")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_port_in_use_is_one_line_before_any_banner(
    host: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import types

    monkeypatch.setitem(sys.modules, "textual_serve", types.ModuleType("textual_serve"))
    monkeypatch.setitem(sys.modules, "textual_serve.server", types.SimpleNamespace(Server=BannerFirst))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", host, "--port", str(port), str(RECORDINGS)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"tau-tui: cannot listen on {host}:{port}: address already in use\n"


def test_a_port_in_use_with_textual_serve_is_one_line_and_no_banner() -> None:
    pytest.importorskip("textual_serve", reason="the 'serve' extra (textual-serve) is not installed")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "tau_tui", "serve", "--port", str(port), str(RECORDINGS)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"tau-tui: cannot listen on 127.0.0.1:{port}: address already in use\n"


def test_each_tab_runs_this_python_on_the_same_files_data_and_judge(tmp_path: Path) -> None:
    from tau_tui.config import Settings
    from tau_tui.workspace import Workspace

    workspace = Workspace(
        Settings(tau2_data=CORPUS, domain_paths=[tmp_path], runs_dir=tmp_path / "runs", recording_domain="airline")
    )
    argv = shlex.split(app_command([RECORDINGS], workspace, "openai/judge", "http://127.0.0.1:9/v1"))
    assert argv[:3] == [sys.executable, "-m", "tau_tui"]
    assert argv[3] == str(RECORDINGS.resolve())
    assert argv[argv.index("--tau2-data") + 1] == str(CORPUS.resolve())
    assert argv[argv.index("--domains") + 1] == str(tmp_path.resolve())
    assert argv[argv.index("--judge") + 1] == "openai/judge"
    assert argv[argv.index("--judge-api-base") + 1] == "http://127.0.0.1:9/v1"
    assert argv[argv.index("--domain") + 1] == "airline"


def test_allow_network_warns_that_the_token_is_the_only_lock_and_serves() -> None:
    pytest.importorskip("textual_serve", reason="the 'serve' extra (textual-serve) is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tau_tui",
            "serve",
            "--host",
            "0.0.0.0",
            "--allow-network",
            "--port",
            str(port),
            "--public-url",
            f"http://127.0.0.1:{port}/",
            str(RECORDINGS),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        warning = proc.stderr.readline()
        assert "warning: serving on 0.0.0.0" in warning and "plain HTTP" in warning
        assert "the token in the address is the only lock" in warning and "API keys" in warning
        address = served_address(proc)
        assert address.startswith(f"http://127.0.0.1:{port}/?token=")
        deadline = time.monotonic() + 30
        while True:  # and it does serve (the page answers on loopback too)
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start listening"
                time.sleep(0.2)
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with browser.open(address, timeout=10) as first:  # the token sets the cookie, and the page moves on
            assert 'http-equiv="refresh" content="0; url=./"' in first.read().decode()
        with browser.open(f"http://127.0.0.1:{port}/", timeout=10) as page:
            html = page.read().decode()
        assert f"ws://127.0.0.1:{port}/ws" in html  # the page connects back to --public-url, not to 0.0.0.0
    finally:
        proc.terminate()
        proc.wait(timeout=15)
