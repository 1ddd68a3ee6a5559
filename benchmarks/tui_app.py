"""The TUI as the benchmarks build and watch it: through ``Session.from_settings``, as ``tau-tui`` does.

A baseline tree measured in the same run (``--base``) may predate the session factory; it is built and
read the way that tree's own code did, so both trees can be timed by the same probe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_app(paths: list[str], tau2_data: str, *, workers: int | None = None, background_replay: bool = True) -> Any:
    try:
        from tau_tui.session import Session
    except ImportError:  # a baseline tree from before the session factory
        from tau_tui.tui.app import TauTuiApp

        app = TauTuiApp(
            [Path(p) for p in paths], tau2_data=tau2_data, **({} if workers is None else {"workers": workers})
        )
        if not background_replay:
            app.queue_replay = lambda rows: None
        return app
    from tau_tui.config import resolve
    from tau_tui.tui.app import TauTuiApp

    settings = resolve().model_copy(update={"tau2_data": Path(tau2_data), "workers": workers})  # env as tau-tui
    return TauTuiApp(Session.from_settings(settings, paths, background_replay=background_replay))


def catalog(app: Any) -> Any:
    return app.session.catalog if hasattr(app, "session") else app.catalog


def indexed(app: Any) -> bool:
    """Every file is indexed and the runs table shows them."""
    if hasattr(app, "session"):
        library = app.session.library
        loaded = library.progress is not None and not library.loading
    else:
        loaded = app.generation and not app.loading_files
    return bool(loaded) and not app.runs_screen.refresh_pending
