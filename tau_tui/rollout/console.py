"""Terminal front-ends of the rollout core: a rich progress display for ``tau-tui run`` and a
line-based ``tau-tui play`` for when no TUI screen is available.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Callable, TextIO

from tau_tui import formats
from tau_tui.model.messages import Message, ParticipantMessage, ToolMessage
from tau_tui.rollout.orchestrator import EpisodeEnded, MessageAdded
from tau_tui.rollout.progress import RunTally, lost_text, node_parts, retry_text
from tau_tui.rollout.runner import LLMRetried, RunFinished, RunStarted, SimulationFinished, WorkerLost
from tau_tui.rollout.session import PlaySession
from tau_tui.textsafe import clip, one_line, visible


def _plain(value: Any) -> str:
    """A recorded value for a rich markup string: control characters shown, brackets not read as markup."""
    from rich.markup import escape

    return escape(one_line(str(value)))


def _clip(text: str, limit: int = 300) -> str:
    return clip(" ".join(text.split()), limit)


NODE_STYLES = {"done": "", "running": "cyan", "dead": "bold red", "lost": "yellow"}  # ``node_parts`` kinds
NODE_LINES = 6  # nodes listed under the bar; the rest are summed on one line


def node_lines(tally: RunTally, limit: int = NODE_LINES) -> list[str]:
    """Rich markup lines of the per-node counts under the progress bar (over Ray): the first ``limit`` nodes
    of ``ranked_nodes`` and one line for the rest."""
    ranked = tally.ranked_nodes()
    lines = []
    for name, node in ranked[:limit]:
        parts = [f"[{NODE_STYLES[kind]}]{text}[/]" if NODE_STYLES[kind] else text for text, kind in node_parts(node)]
        lines.append(f"  on {_plain(name)}: " + " · ".join(parts))
    rest = ranked[limit:]
    if rest:
        done = sum(node.done for _, node in rest)
        running = sum(node.running for _, node in rest)
        lines.append(f"  +{len(rest)} more nodes: {done} done · {running} running")
    return lines


class RunProgress:
    """Draws runner events (folded by ``RunTally``): a progress bar with the average reward and, over Ray, the
    counts of each node under it; one line per finished simulation."""

    def __init__(self, stream: TextIO | None = None, per_simulation: bool = True):
        from rich.console import Console, RenderableType
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.text import Text

        tally = RunTally()

        class WithNodes(Progress):
            """The bar, then a line per node (redrawn with it)."""

            def get_renderables(self) -> Any:
                yield from super().get_renderables()
                lines: list[RenderableType] = [Text.from_markup(line) for line in node_lines(tally)]
                yield from lines

        self.console = Console(file=stream or sys.stderr, highlight=False, soft_wrap=True)
        self.progress = WithNodes(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.per_simulation = per_simulation
        self.bar: Any = None
        self.tally = tally

    def __enter__(self) -> RunProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def _status(self) -> str:
        average = self.tally.average
        avg = f"avg reward {formats.average(average, '-')}"
        return f"{avg} · {self.tally.running} running"

    def __call__(self, event: Any) -> None:
        self.tally.apply(event)
        if isinstance(event, RunStarted):
            self.bar = self.progress.add_task(
                "simulations", total=event.total, completed=event.already_done, status=self._status()
            )
            if event.already_done:
                self.console.print(f"resuming {_plain(event.path)}: {event.already_done} done, {event.pending} to run")
        elif isinstance(event, LLMRetried):
            self.console.print(f"[yellow]{_plain(retry_text(event))}[/yellow]")
        elif isinstance(event, WorkerLost):
            self.console.print(f"[red]{_plain(lost_text(event))}[/red]")
        elif isinstance(event, SimulationFinished):
            if self.per_simulation:
                sim = event.simulation
                mark = (
                    "[green]✓[/green]"
                    if event.reward == 1.0
                    else "[red]✗[/red]"
                    if event.reward is not None
                    else "[yellow]?[/yellow]"
                )
                reward = "unscored" if event.reward is None else f"reward {formats.reward(event.reward)}"
                cost = f" · {formats.money(sim.agent_cost)}" if sim.agent_cost else ""
                node = f" · on {_plain(event.node)}" if event.node else ""
                self.console.print(
                    f"{mark} task {_plain(event.task_id)} trial {event.trial}: {reward} · "
                    f"{_plain(sim.termination_reason)} · {len(sim.messages or [])} messages{cost}{node}"
                )
            if self.bar is not None:
                self.progress.update(self.bar, completed=self.tally.done, status=self._status())
        elif isinstance(event, RunFinished) and self.bar is not None:
            self.progress.update(self.bar, status=self._status())
            if self.tally.by_node:
                counts = ", ".join(f"{_plain(node)} {n}" for node, n in sorted(self.tally.by_node.items()))
                self.console.print(f"simulations per node: {counts}")


# --- line-based play ------------------------------------------------------------------------

PLAY_HELP = """\
Type a message and press Enter to send it. Commands:
  /prompt                the system prompt a model in your place would get (the protocol's)
  /tools                 list the tools you can call
  /call NAME {json}      call a tool, e.g. /call check_notifications {}
  /stop                  end the conversation (###STOP###) and score it
  /quit                  leave without saving
  /help                  this help"""


def describe_message(message: Message) -> str:
    """One line (or a few) per message, as the plain play shows it."""
    if isinstance(message, ToolMessage):
        flag = " (error)" if message.error else ""
        return f"  [tool result for {message.requestor}{flag}] {_clip(message.text)}"
    who = "agent" if message.role == "assistant" else message.role
    lines = []
    if message.text:
        lines.append(f"{who}: {message.text}")
    if isinstance(message, ParticipantMessage):
        for call in message.tool_calls or []:
            lines.append(f"  [{who} calls] {call.name}({json.dumps(call.arguments)})")
    return "\n".join(lines) or f"{who}: (empty)"


def describe_tools(tools: list[dict[str, Any]]) -> str:
    lines = []
    for tool in tools:
        function = tool["function"]
        params = function["parameters"].get("properties", {})
        required = set(function["parameters"].get("required", []))
        args = ", ".join(f"{p}{'' if p in required else '?'}" for p in params)
        lines.append(f"  {function['name']}({args}): {_clip(function['description'], 100)}")
    return "\n".join(lines) or "  (no tools)"


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME {json}`` → (name, arguments); raises ValueError with a readable reason."""
    name, _, rest = text.strip().partition(" ")
    if not name:
        raise ValueError("usage: /call NAME {json arguments}")
    rest = rest.strip()
    if not rest:
        return name, {}
    try:
        arguments = json.loads(rest)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be a JSON object")
    return name, arguments


async def _read_line(prompt: str, write: Callable[[str], None]) -> str | None:
    write(prompt)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    return None if line == "" else line.rstrip("\n")


async def play_plain(session: PlaySession, out: Path, write: Callable[[str], None] | None = None) -> int:
    """Play a session on stdin/stdout; saves to ``out`` when the episode ends. Returns an exit status."""

    def emit(text: str) -> None:
        (write or (lambda t: (sys.stdout.write(t), sys.stdout.flush())))(visible(text))

    def show(event: Any) -> None:
        if isinstance(event, MessageAdded):
            emit(describe_message(event.message) + "\n")
        elif isinstance(event, EpisodeEnded):
            emit(f"-- ended: {event.termination}\n")

    session.on_event = show
    emit(f"Playing the {session.play_as} of task {session.task.id}; {session.protocol.describe()}.\n")
    emit("/prompt shows the prompt a model in your place would get; /help for commands.\n")
    session.start()
    while True:
        request = await session.wait_turn()
        if request is None:
            break
        while True:
            line = await _read_line(f"you ({session.play_as})> ", emit)
            if line is None or line.strip() == "/quit":
                session.abort()
                emit("left without saving\n")
                return 130
            command = line.strip()
            try:
                if command in ("/help", "?"):
                    emit(PLAY_HELP + "\n")
                    continue
                if command == "/prompt":
                    emit(_prompt_text(session) + "\n")
                    continue
                if command == "/tools":
                    emit(describe_tools(session.tools) + "\n")
                    continue
                if command == "/stop":
                    session.end()
                elif command.startswith("/call"):
                    name, arguments = parse_call(command[len("/call") :])
                    session.call_tool(name, arguments)
                elif command.startswith("/"):
                    emit(f"unknown command {command.split()[0]} (/help)\n")
                    continue
                elif not command:
                    continue
                else:
                    session.say(line)
                break
            except ValueError as exc:
                emit(f"! {exc}\n")
    await session.wait()
    emit(outcome_line(session))
    path = session.save(out)
    emit(f"saved to {path}\n")
    return 0


def _prompt_text(session: PlaySession) -> str:
    try:
        return session.person_prompt()
    except ValueError as exc:  # protocol tau2 without tau2's agent prompt: said, not raised
        return f"! {exc}"


def outcome_line(session: PlaySession) -> str:
    """``termination: user_stop; reward: 1``: how a finished play session ended (both front ends print it)."""
    reward = session.reward
    termination = session.result.termination_reason if session.result is not None else "?"
    return f"termination: {termination}; reward: {formats.reward(reward, 'unscored')}\n"
