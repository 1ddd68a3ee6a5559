"""``tau-tui serve [PATH...]``: the same TUI in a web browser, one app process per browser tab.

textual-serve (the optional extra ``serve``) runs a small web server; each page that
connects starts ``python -m tau_tui [PATH...]`` with Textual's web driver and streams its
terminal to the page. Exports and JSON views reach the browser as downloads
(``TauTuiApp.open_json``). It listens on the loopback interface unless told otherwise: there
is no authentication in front of the app, and the app can launch rollouts with this machine's
API keys, so any other address needs ``--allow-network`` and prints a warning.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from pathlib import Path
from typing import Any

from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, add_domain_flag, add_judge_flags, err

NAME = "serve"
SHARED_FLAGS = True
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(sub: Any, running: bool = False) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        NAME,
        help="serve the TUI to a web browser (needs the 'serve' extra)",
        description="Serve the TUI on PATH... (default: the bundled recordings) to web browsers: every browser tab "
        "gets an app process of its own, with every feature of the terminal app; JSON views and exports are "
        "downloads. There is no authentication: anyone who can open the page can read the loaded runs and launch "
        "rollouts with this machine's API keys. It listens on 127.0.0.1 unless --host names another address, "
        "which needs --allow-network.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="run files or folders")
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="HOST",
        help=f"address to listen on (default {DEFAULT_HOST}; a non-loopback one needs --allow-network)",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N", help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--allow-network", action="store_true", help="allow a --host other than loopback (no authentication: see above)"
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers open (default http://HOST:PORT); needed with --host 0.0.0.0 "
        "or behind a proxy, as the page connects back to it",
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


def network_warning(host: str, port: int) -> str:
    return (
        f"warning: serving on {host}:{port} beyond this machine with no authentication: anyone who can reach "
        "it can read the loaded runs and launch rollouts with this machine's API keys"
    )


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
                "(there is no authentication)"
            )
            return EXIT_INPUT
    if args.public_url and not args.public_url.startswith(("http://", "https://")):
        err(f"--public-url {args.public_url}: not an http:// or https:// URL")
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
    public_url = args.public_url.rstrip("/") if args.public_url else None
    server = Server(
        app_command(paths, workspace, args.judge, args.judge_api_base),
        host=args.host,
        port=args.port,
        title="tau-tui",
        public_url=public_url,
    )
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the address is not this machine's...
        err(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return EXIT_INPUT
    return EXIT_OK
