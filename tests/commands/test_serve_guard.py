"""``tau-tui serve`` lets in only the page its user opened: this server's Host, its own Origin, this launch's token.

A real ``tau-tui serve`` process on a free loopback port, driven with aiohttp's HTTP and WebSocket client (what
textual-serve itself is built on) and forged headers: another site's ``Origin`` (a page the user visits opening
``ws://127.0.0.1:PORT/ws``), another ``Host`` (DNS rebinding: the attacker's domain resolving to 127.0.0.1), no
token or a wrong one (a guessed port). Each is a 403 on every route (the page, the WebSocket, static files,
downloads); the printed address, its cookie and the WebSocket with both still work, and the app streams.
The page in a real browser, with the token, is tests/commands/test_serve_browser.py.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from tau_tui.cli import main
from tau_tui.commands.serve import Guard
from tests.conftest import CORPUS, ROOT
from tests.helpers import served_address, stop_process, wait_for_port

if TYPE_CHECKING:
    import aiohttp

RECORDINGS = ROOT / "tests" / "fixtures" / "mock_recordings"
_T = TypeVar("_T")
EVIL = "https://evil.example"


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    """``tau-tui serve`` on the mock recordings; yields (printed address, port, the file its stderr goes to)."""
    pytest.importorskip("textual_serve", reason="the 'serve' extra (textual-serve) is not installed")
    if not CORPUS.is_dir():
        pytest.skip(f"the tau2 corpus is missing at {CORPUS}")
    folder = tmp_path_factory.mktemp("serve")
    runs = folder / "runs"
    runs.mkdir()
    shutil.copy(RECORDINGS / "mock_demo.json", runs)
    port = free_port()
    stderr = folder / "stderr.txt"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TAU2_DATA_DIR=str(CORPUS), TMPDIR=str(folder))
    with stderr.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "tau_tui", "serve", "--port", str(port), str(runs)],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    try:
        address = served_address(process)
        wait_for_port(port, process)  # textual-serve announces on start-up, just before it binds
        yield address, port, stderr
    finally:
        stop_process(process)


def token_of(address: str) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(address).query)["token"][0]


async def status_of(
    url: str, headers: dict[str, str] | None = None, cookies: dict[str, str] | None = None
) -> tuple[int, set[str], str | None, str]:
    """(status, Set-Cookie names, Location, body) of one GET, redirects not followed."""
    import aiohttp

    async with aiohttp.ClientSession(cookies=cookies) as session:
        async with session.get(url, headers=headers or {}, allow_redirects=False) as response:
            return response.status, set(response.cookies), response.headers.get("Location"), await response.text()


async def websocket_status(
    url: str, headers: dict[str, str] | None = None, cookies: dict[str, str] | None = None
) -> tuple[int, aiohttp.WSMessage | None]:
    """The handshake's status: 101 (and the first bytes the app streams) or the refusal's status."""
    import aiohttp

    async with aiohttp.ClientSession(cookies=cookies) as session:
        try:
            async with session.ws_connect(
                url, headers=headers or {}, timeout=aiohttp.ClientWSTimeout(ws_close=5)
            ) as ws:
                message = await asyncio.wait_for(ws.receive(), timeout=60)
                return 101, message
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status, None


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coroutine)


def origin(port: int) -> str:
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(
    "headers, why",
    [
        ({"Origin": EVIL}, "another site's page"),
        ({"Origin": "null"}, "a sandboxed frame or a file:// page"),
        ({"Origin": "http://127.0.0.1:1"}, "a page of another port on this machine"),
        ({"Host": "evil.example:{port}"}, "DNS rebinding: the attacker's name for 127.0.0.1"),
        (
            {"Host": "evil.example:{port}", "Origin": "http://evil.example:{port}"},
            "DNS rebinding, as a browser sends it",
        ),
    ],
)
def test_a_websocket_from_another_site_or_host_is_refused_even_with_the_token(
    server: tuple[str, int, Path], headers: dict[str, Any], why: str
) -> None:
    address, port, stderr = server
    headers = {k: v.format(port=port) for k, v in headers.items()}
    status, _ = run(websocket_status(f"ws://127.0.0.1:{port}/ws?token={token_of(address)}", headers))
    assert status == 403, why
    cookie = {f"tau-tui-token-{port}": token_of(address)}
    assert run(websocket_status(f"ws://127.0.0.1:{port}/ws", headers, cookie))[0] == 403, why
    assert run(status_of(f"http://127.0.0.1:{port}/?token={token_of(address)}", headers))[0] == 403, why
    assert "serve: refused GET /ws: " in stderr.read_text()


@pytest.mark.parametrize("token", [None, "", "guessed", "x" * 43])
def test_without_this_launchs_token_every_route_is_refused(server: tuple[str, int, Path], token: str | None) -> None:
    address, port, _ = server
    query = "" if token is None else f"?token={token}"
    cookies = None if token is None else {f"tau-tui-token-{port}": token}
    status, _ = run(websocket_status(f"ws://127.0.0.1:{port}/ws{query}", {"Origin": origin(port)}))
    assert status == 403
    assert run(websocket_status(f"ws://127.0.0.1:{port}/ws", {"Origin": origin(port)}, cookies))[0] == 403
    for path in ("/", "/static/js/textual.js", "/static/", "/download/some-key"):
        status, set_cookies, _, body = run(status_of(f"http://127.0.0.1:{port}{path}{query}"))
        assert status == 403 and not set_cookies and "token" in body, path


def test_the_printed_address_sets_the_cookie_and_the_page_and_its_websocket_work(server: tuple[str, int, Path]) -> None:
    address, port, stderr = server
    assert address.startswith(f"http://127.0.0.1:{port}/?token=") and len(token_of(address)) >= 40
    status, cookies, _, body = run(status_of(address + "&fontsize=14"))
    assert status == 200 and cookies == {f"tau-tui-token-{port}"}
    # the page moves on without the token in the address bar; the rest of the query stays
    assert '<meta http-equiv="refresh" content="0; url=./?fontsize=14">' in body and token_of(address) not in body
    jar = {f"tau-tui-token-{port}": token_of(address)}
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):  # the loopback names of this server
        status, _, _, page = run(status_of(f"http://127.0.0.1:{port}/", {"Host": host}, jar))
        assert status == 200 and f"ws://127.0.0.1:{port}/ws" in page
    status, _, _, script = run(status_of(f"http://127.0.0.1:{port}/static/js/textual.js", {}, jar))
    assert status == 200 and "WebSocket" in script
    # the browser's WebSocket: its own Origin and the cookie; the app process starts and streams its terminal
    status, message = run(
        websocket_status(f"ws://127.0.0.1:{port}/ws?width=80&height=24", {"Origin": origin(port)}, jar)
    )
    assert status == 101 and message is not None and message.type.name in ("TEXT", "BINARY")
    # a client that is no browser (no Origin) with the token in the address
    status, _ = run(websocket_status(f"ws://127.0.0.1:{port}/ws?token={token_of(address)}"))
    assert status == 101
    assert token_of(address) not in stderr.read_text()  # refusals are logged without any token


def refusal_of(guard: Guard, host: str | None, page_origin: str | None) -> str:
    """Why ``guard`` refuses a request with this Host and Origin (the test expects it to)."""
    said = guard.refusal(host, page_origin)
    assert said is not None, (host, page_origin)
    return said


def test_the_guard_names_this_server_its_loopback_aliases_and_the_public_url() -> None:
    guard = Guard.for_server("127.0.0.1", 8000, "http://127.0.0.1:8000", "t" * 43)
    assert guard.hosts == {"127.0.0.1:8000", "localhost:8000", "[::1]:8000"}
    assert guard.origins == {"http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"}
    assert guard.refusal("LOCALHOST:8000", None) is None
    assert "DNS-rebinding" in refusal_of(guard, "attacker.example:8000", None)
    assert "DNS-rebinding" in refusal_of(guard, "127.0.0.1:8001", None) and guard.refusal(None, None)
    assert "another site" in refusal_of(guard, "127.0.0.1:8000", "http://127.0.0.1:8000.evil.example")
    proxied = Guard.for_server("0.0.0.0", 8000, "https://tau.example.org", "t" * 43)
    assert proxied.hosts == {"tau.example.org:443", "tau.example.org"} and proxied.secure
    assert proxied.origins == {"https://tau.example.org"}
    assert proxied.refusal("tau.example.org", "https://tau.example.org") is None
    assert proxied.refusal("0.0.0.0:8000", None) is not None
    lan = Guard.for_server("192.168.1.10", 8080, "http://192.168.1.10:8080", "t" * 43)
    assert lan.hosts == {"192.168.1.10:8080"} and not lan.secure
    assert guard.admits("t" * 43) and not guard.admits("t" * 42) and not guard.admits(None)


def test_every_address_without_a_public_url_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--allow-network", str(RECORDINGS)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--host 0.0.0.0: listens on every address" in err
    assert "--public-url" in err


@pytest.mark.parametrize("url", ["http://:8000", "http://host:port/", "ftp://host/"])
def test_a_public_url_without_a_host_or_with_a_bad_port_is_one_line(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--public-url", url, str(RECORDINGS)]) == 2
    err = capsys.readouterr().err
    assert f"--public-url {url}: not an http:// or https:// URL" in err and err.count("\n") == 1


def test_the_docs_say_what_serve_refuses_and_why() -> None:
    page = (ROOT / "docs" / "serve.md").read_text()
    section = page[page.index("## What `serve` refuses, and why") :]
    section = section[: section.index("\n## ", 5)]
    for said in ("403", "Origin", "Host", "DNS rebinding", "token", "cookie"):
        assert said in section, said


def test_served_address_reads_the_banner(tmp_path: Path) -> None:
    printer = subprocess.Popen(
        [sys.executable, "-c", "print('Serving tau-tui on http://127.0.0.1:9/?token=abc', flush=True)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert served_address(printer, timeout=30) == "http://127.0.0.1:9/?token=abc"
    finally:
        printer.wait(timeout=30)
