"""``tau-tui serve [PATH...]``: the same TUI in a web browser, one app process per browser tab.

textual-serve (the optional extra ``serve``) runs a small web server; each page that
connects starts ``python -m tau_tui [PATH...]`` with Textual's web driver and streams its
terminal to the page. Exports and JSON views reach the browser as downloads
(``TauTuiApp.open_json``). The app can read every loaded run and launch rollouts with this
machine's API keys, so the server lets in only what the person who started it opens
(``Guard``, a middleware around textual-serve's aiohttp app): a request must name this server in
its ``Host`` header (a DNS-rebinding page names its own domain), a browser's ``Origin`` must be
this server's (another site's page, or its WebSocket, is refused), and it must carry the secret
token of this launch, in the printed address or in the cookie the first visit sets. Anything else
is a 403. It listens on the loopback interface unless told otherwise; any other address needs
``--allow-network`` and prints a warning.
"""

from __future__ import annotations

import argparse
import hmac
import html
import ipaddress
import secrets
import shlex
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, Subparsers, add_domain_flag, add_judge_flags, err, whole

NAME = "serve"
SHARED_FLAGS = True
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        NAME,
        help="serve the TUI to a web browser (needs the 'serve' extra)",
        description="Serve the TUI on PATH... (default: the bundled recordings) to web browsers: every browser tab "
        "gets an app process of its own, with every feature of the terminal app; JSON views and exports are "
        "downloads. Whoever opens the page can read the loaded runs and launch rollouts with this machine's API "
        "keys, so the server answers only requests that carry the secret token of this launch (in the address it "
        "prints, then a cookie), name this server as their Host and, from a browser, come from its own pages "
        "(Origin); the rest get 403. It listens on 127.0.0.1 unless --host names another address, which needs "
        "--allow-network.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="run files or folders")
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="HOST",
        help=f"address to listen on (default {DEFAULT_HOST}; a non-loopback one needs --allow-network)",
    )
    parser.add_argument(
        "--port", type=whole(0), default=DEFAULT_PORT, metavar="N", help=f"port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--allow-network",
        action="store_true",
        help="allow a --host other than loopback (plain HTTP: the token is the only lock; see above)",
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers open (default http://HOST:PORT); needed with --host 0.0.0.0 "
        "or behind a proxy: the page connects back to it, and its host is the one other Host and Origin let in",
    )
    add_judge_flags(
        parser, "litellm model that judges a trajectory's NL assertions when asked (J on the trajectory screen)"
    )
    add_domain_flag(parser)
    return parser


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1); a host name is not trusted to be one."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_unspecified(host: str) -> bool:
    """``0.0.0.0`` or ``::``: every interface, so no one address a browser would name."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def network_warning(host: str, port: int) -> str:
    return (
        f"warning: serving on {host}:{port} beyond this machine over plain HTTP: the token in the address is the "
        "only lock, and anyone who sees it (or the traffic) can read the loaded runs and launch rollouts with this "
        "machine's API keys"
    )


TOKEN_PARAMETER = "token"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _authority(name: str, port: int, scheme: str) -> list[str]:
    """How a ``Host`` header names ``name:port``: with the port, and without it when it is the scheme's default."""
    name = name.lower().strip("[]")
    shown = f"[{name}]" if ":" in name else name
    return [f"{shown}:{port}"] + ([shown] if _DEFAULT_PORTS.get(scheme) == port else [])


@dataclass(frozen=True)
class Guard:
    """What a request must show to reach the served app, and why each is asked.

    ``hosts``: the ``Host`` header values that name this server (a DNS-rebinding page reaches our port under its
    own domain, and its requests say so); ``origins``: the ``Origin`` a browser may send (another site's page, or
    a WebSocket it opens, says its own; a request with no ``Origin`` is no page's); ``token``: the secret of this
    launch, in the address ``serve`` prints (``?token=``) or in the cookie ``cookie`` set on the first visit, so a
    guessed port is not enough.
    """

    hosts: frozenset[str]
    origins: frozenset[str]
    token: str
    cookie: str
    secure: bool = False

    @classmethod
    def for_server(cls, host: str, port: int, public_url: str | None, token: str) -> Guard:
        """The guard of a server listening on ``host:port`` that browsers open at ``public_url`` (when given)."""
        places: list[tuple[str, str, int]] = []
        if not is_unspecified(host):
            names = [host] + (["localhost", "127.0.0.1", "::1"] if is_loopback(host) else [])
            places += [("http", name, port) for name in names]
        secure = False
        if public_url:
            parts = urllib.parse.urlsplit(public_url)
            scheme = parts.scheme.lower()
            places.append((scheme, parts.hostname or "", parts.port or _DEFAULT_PORTS[scheme]))
            secure = scheme == "https"
        hosts = {value for scheme, name, at in places for value in _authority(name, at, scheme)}
        origins = {f"{scheme}://{_authority(name, at, scheme)[-1]}" for scheme, name, at in places}
        return cls(frozenset(hosts), frozenset(origins), token, f"tau-tui-token-{port}", secure)

    def refusal(self, host: str | None, origin: str | None) -> str | None:
        """Why a request with these ``Host`` and ``Origin`` headers is not let in, or None."""
        if host is None or host.lower() not in self.hosts:
            return f"Host {host!r} is not this server's address (a DNS-rebinding page?)"
        if origin is not None and origin.lower() not in self.origins:
            return f"Origin {origin!r} is not this server's page (another site?)"
        return None

    def admits(self, token: str | None) -> bool:
        """Whether ``token`` is this launch's (compared in constant time)."""
        return token is not None and hmac.compare_digest(token.encode(), self.token.encode())


def guard_middleware(guard: Guard) -> Any:
    """An aiohttp middleware that lets through only what ``guard`` admits.

    A refused request gets 403 and one line on stderr (method, path, why: never the token). The first visit of
    the page with the right ``?token=`` sets the cookie and moves on to the same page without the token (a page
    that refreshes itself: a redirect would still belong to the navigation, which a link on another site started,
    and a ``SameSite=Strict`` cookie is not sent on it), so the address bar and history no longer hold it.
    """
    from aiohttp import web

    @web.middleware
    async def middleware(request: Any, handler: Any) -> Any:
        refusal = guard.refusal(request.headers.get("Host"), request.headers.get("Origin"))
        if refusal is None:
            given = request.query.get(TOKEN_PARAMETER)
            if given is not None and guard.admits(given):
                if request.method == "GET" and request.path == "/" and not request.headers.get("Upgrade"):
                    rest = [(k, v) for k, v in request.query.items() if k != TOKEN_PARAMETER]
                    target = html.escape("./" + (f"?{urllib.parse.urlencode(rest)}" if rest else ""))
                    response = web.Response(
                        text=f'<!doctype html><meta http-equiv="refresh" content="0; url={target}">'
                        f'<a href="{target}">tau-tui</a>\n',
                        content_type="text/html",
                        headers={"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"},
                    )
                    response.set_cookie(
                        guard.cookie, guard.token, path="/", httponly=True, samesite="Strict", secure=guard.secure
                    )
                    return response
                return await handler(request)
            if given is None and guard.admits(request.cookies.get(guard.cookie)):
                return await handler(request)
            refusal = "no token, or not this launch's (open the address tau-tui serve printed)"
        err(f"serve: refused {request.method} {request.path}: {refusal}")
        return web.Response(status=403, text=f"403 forbidden: {refusal}\n")

    return middleware


def guarded_server(server_class: Any, command: str, host: str, port: int, public_url: str, guard: Guard) -> Any:
    """textual-serve's ``Server`` with ``guard`` in front of every route, announcing the address with the token."""

    # textual-serve is an optional extra that mypy skips ([tool.mypy] overrides): its Server is Any here
    class GuardedServer(server_class):  # type: ignore[misc]
        async def _make_app(self) -> Any:
            app = await super()._make_app()
            app.middlewares.append(guard_middleware(guard))
            return app

        async def on_startup(self, app: Any) -> None:
            print(f"Serving tau-tui on {self.address}\nPress Ctrl+C to quit", flush=True)

        @property
        def address(self) -> str:
            """The address to open: the public URL with this launch's token."""
            return f"{self.public_url}/?{TOKEN_PARAMETER}={guard.token}"

    return GuardedServer(command, host=host, port=port, title="tau-tui", public_url=public_url)


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (the port is taken, the address is not this machine's…), or None.

    Found by binding every address the server would bind, as asyncio does, and releasing it: textual-serve
    prints its "Serving…" banner before it binds, so it must not be started on a port it cannot have.
    """
    import socket

    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return str(exc.strerror or exc)
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            if hasattr(socket, "SO_REUSEADDR") and sys.platform != "win32":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                return reason[:1].lower() + reason[1:]
    return None


def app_command(paths: list[Path], workspace: Any, judge: str | None, judge_api_base: str | None) -> str:
    """The shell command each browser tab runs: this Python, the TUI on ``paths``, the same data, judge and domain
    of recordings that name none."""
    argv = [sys.executable, "-m", "tau_tui", *[str(p.resolve()) for p in paths]]
    settings = workspace.settings
    if settings.tau2_data:
        argv += ["--tau2-data", str(Path(settings.tau2_data).resolve())]
    for folder in settings.domain_paths:
        argv += ["--domains", str(Path(folder).resolve())]
    if judge:
        argv += ["--judge", judge]
    if judge_api_base:
        argv += ["--judge-api-base", judge_api_base]
    if settings.recording_domain:
        argv += ["--domain", settings.recording_domain]
    return shlex.join(argv)


def is_web_address(url: str) -> bool:
    """An ``http://`` or ``https://`` URL with a host name and, if any, a numeric port."""
    parts = urllib.parse.urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _public_url(host: str, port: int, given: str | None) -> str:
    """The address browsers open, without a trailing slash: ``--public-url``, else ``http://HOST:PORT``."""
    if given:
        return given.rstrip("/")
    name = host.strip("[]")
    return f"http://{f'[{name}]' if ':' in name else name}:{port}"


def run(args: argparse.Namespace, workspace: Any) -> int:
    paths = [Path(p) for p in args.paths]
    missing = [p for p in paths if not p.exists()]
    if missing:
        err(f"{missing[0]}: does not exist")
        return EXIT_INPUT
    if not 0 < args.port < 65536:
        err(f"--port {args.port}: not a port number (1-65535)")
        return EXIT_INPUT
    if not is_loopback(args.host):
        if not args.allow_network:
            err(
                f"--host {args.host}: not a loopback address; serving to the network needs --allow-network "
                "(plain HTTP: the token is the only lock)"
            )
            return EXIT_INPUT
    if args.public_url:
        if not is_web_address(args.public_url):
            err(f"--public-url {args.public_url}: not an http:// or https:// URL")
            return EXIT_INPUT
    elif is_unspecified(args.host):
        err(
            f"--host {args.host}: listens on every address, so it needs --public-url, the address browsers open "
            "(requests naming any other host are refused)"
        )
        return EXIT_INPUT
    if not is_loopback(args.host):
        err(network_warning(args.host, args.port))
    try:
        from textual_serve.server import Server
    except ImportError as exc:
        err(f"serving needs the 'serve' extra (pip install 'tau-tui[serve]'): {exc}")
        return EXIT_INPUT
    problem = port_problem(args.host, args.port)
    if problem:
        err(f"cannot listen on {args.host}:{args.port}: {problem}")
        return EXIT_INPUT
    public_url = _public_url(args.host, args.port, args.public_url)
    guard = Guard.for_server(args.host, args.port, public_url, secrets.token_urlsafe(32))
    command = app_command(paths, workspace, args.judge, args.judge_api_base)
    server = guarded_server(Server, command, args.host, args.port, public_url, guard)
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the address is not this machine's...
        err(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return EXIT_INPUT
    return EXIT_OK
