"""``tau-tui play``: play the user or the agent of one task yourself."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, Subparsers, add_judge_flags, add_protocol_flags, err, whole

if TYPE_CHECKING:
    from tau_tui.config import Settings
    from tau_tui.rollout import PlaySession
    from tau_tui.tui.play import PlayOutcome
    from tau_tui.workspace import Workspace

NAME = "play"
SHARED_FLAGS = True


class PlayInTui(Protocol):
    """``tau_tui.tui.play.run_play``: play ``session`` in the TUI, saving the recording to ``out``."""

    async def __call__(
        self, session: PlaySession, out: Path | str, keymap: dict[str, str] | None = None
    ) -> PlayOutcome: ...


class Inspector(Protocol):
    """The TUI's app on a saved recording (``tau_tui.tui.play.recording_inspector``): run until it is left."""

    def run(self) -> object: ...


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    play = sub.add_parser(
        NAME,
        help="play the user or the agent of one task yourself",
        description="A human session: you play one side of a task, MODEL (a litellm model string or a scripted "
        "participant) plays the other. The result is evaluated and saved as a tau2 results file.",
    )
    play.add_argument("--as", dest="play_as", required=True, choices=("user", "agent"), help="the side you play")
    play.add_argument("--domain", required=True, metavar="D", help="domain name")
    play.add_argument("--task", required=True, metavar="ID", help="task id")
    play.add_argument(
        "--llm",
        required=True,
        metavar="MODEL",
        help="the other side: a litellm model, or scripted/gold (agent) / scripted/user (user)",
    )
    play.add_argument("--llm-args", metavar="JSON", help="extra litellm arguments for MODEL")
    play.add_argument("--out", metavar="PATH", help="results file (default runs/<time>_play_<domain>_<task>.json)")
    play.add_argument("--solo", action="store_true", help="solo mode (play the agent on the task's ticket)")
    play.add_argument("--max-steps", type=whole(1), default=200, metavar="N", help="step limit (default 200)")
    play.add_argument("--seed", type=whole(0), metavar="S", help="seed passed to MODEL")
    add_judge_flags(play, "litellm model that judges NL assertions")
    add_protocol_flags(play)
    play.add_argument("--plain", action="store_true", help="line-based play on this terminal instead of the TUI")
    return play


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    import asyncio

    from tau_tui.domains import DomainError
    from tau_tui.model.io import error_text
    from tau_tui.rollout import ParticipantSpecError
    from tau_tui.workspace import PlayRequest

    ws = workspace
    try:
        request = PlayRequest(
            args.domain,
            args.task,
            args.play_as,
            args.llm,
            args.llm_args,
            solo=args.solo,
            seed=args.seed,
            max_steps=args.max_steps,
            out=args.out,
        )
        out = ws.play_path(request)

        inspect: list[Path] = []  # the saved recording, when ctrl+o asked for the inspector

        async def main() -> int:
            session = ws.play_session(request)
            from tau_tui.rollout.console import outcome_line, play_plain

            screen = None if args.plain else _play_screen()
            if screen is None:
                return await play_plain(session, out)
            outcome = await screen(session, out, keymap=ws.settings.keymap)
            if outcome.code == EXIT_OK:
                print(f"{outcome_line(session)}saved to {out}", end="\n", flush=True)
            else:
                err("left before the conversation ended: nothing saved")
            if outcome.open_saved is not None:
                inspect.append(outcome.open_saved)
            return outcome.code

        code = asyncio.run(main())
        if inspect:
            _inspector()(inspect[0], ws.settings).run()
        return code
    except (DomainError, ParticipantSpecError, KeyError, ValueError) as exc:
        err(error_text(exc))
        return EXIT_INPUT


def _play_screen() -> PlayInTui | None:
    """The TUI's play screen, when the TUI provides one (``tau_tui.tui.play.run_play(session, out)``)."""
    try:
        from tau_tui.tui.play import run_play
    except ImportError:
        return None
    return run_play


def _inspector() -> Callable[[Path, Settings], Inspector]:
    """The TUI's inspector on a saved recording (``tau_tui.tui.play.recording_inspector(path, settings)``)."""
    from tau_tui.tui.play import recording_inspector

    return recording_inspector
