"""A play session: a person plays the user or the agent of one task; a model or a script plays the other side.

Left: the conversation (the trajectory view, following the newest message)
and an input box. Right: the live DB (as in the inspector: agent and user
trees, the last change marked) and the brief — what your side knows and the
tools it may call. The episode runs in an async worker on the app's event
loop (a model on the other side is called through litellm's async API); the
session's callbacks only post messages. When it ends it is evaluated and
saved as a tau2 results file.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, cast

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, TabbedContent, TabPane

from tau_tui import formats
from tau_tui.env.environment import EnvState
from tau_tui.model.messages import ToolMessage
from tau_tui.replay.diff import Change, diff_states
from tau_tui.textsafe import visible_renderable
from tau_tui.tui.messages import SessionEvent, SessionFinished, SessionTurn
from tau_tui.tui.screens.tool_form import ToolFormScreen, type_label
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.state_tree import StateTree
from tau_tui.tui.widgets.trajectory_view import TrajectoryView
from tau_tui.views.panels import render_changes
from tau_tui.views.state_nodes import marks_for
from tau_tui.views.trajectory_doc import TrajectoryDoc

if TYPE_CHECKING:
    from tau_tui.rollout import PlaySession, TurnRequest

LEAVE_CONFIRM_SECONDS = 3.0
EXIT_SAVED, EXIT_LEFT = 0, 130


class RecordingOpener(Protocol):
    """What ``ctrl+o`` asks of the app the screen runs in: the inspector (on top of it, or after ``tau-tui play``'s
    own app has closed) on the saved recording."""

    def open_saved_run(self, path: Path) -> None: ...


def indented(text: str) -> RenderableType:
    """Tab-indented text (tau2's scenario layout) with each level two columns in, wrapped lines kept under
    their own indentation."""
    from rich.padding import Padding

    rows: list[RenderableType] = []
    for line in text.splitlines():
        stripped = line.lstrip("\t ")
        depth = len(line) - len(stripped)
        label = stripped.endswith(":") and len(stripped) < 40
        rows.append(Padding(Text(stripped, style="bold" if label else ""), (0, 0, 0, 2 * depth)))
    return Group(*rows)


def brief_text(session: Any) -> RenderableType:
    """What the person's side knows: the user scenario or the agent policy, then the tools it may call."""
    person = session.episode.user if session.play_as == "user" else session.episode.agent
    brief = person.brief
    parts: list[RenderableType] = []
    if session.play_as == "user":
        parts.append(Text("Your scenario (what the customer knows and wants)", style="bold underline"))
        parts.append(indented(brief.scenario_text or "(no scenario)"))
    else:
        if getattr(brief, "ticket", None):
            parts += [Text("Ticket", style="bold underline"), Text(brief.ticket)]
        parts.append(Text("Policy", style="bold underline"))
        parts.append(Text(brief.policy.strip() or "(no policy)"))
    parts.append(Text(""))
    parts.append(Text(f"Your tools ({len(brief.tools)}) · ctrl+t calls one", style="bold underline"))
    if not brief.tools:
        parts.append(Text("none: you can only write messages", style="dim"))
    for tool in brief.tools:
        function = tool["function"]
        props = function.get("parameters", {}).get("properties", {})
        required = set(function.get("parameters", {}).get("required", []))
        line = Text(function["name"], style="bold")
        line.append(
            "(" + ", ".join(f"{p}{'' if p in required else '?'}: {type_label(s)}" for p, s in props.items()) + ")",
            style="dim",
        )
        line.append(f"\n  {' '.join(function.get('description', '').split())}")
        parts.append(line)
    return Group(*parts)


def prompt_text(session: Any) -> RenderableType:
    """The system prompt a model in the person's place would get under the session's protocol (so the person
    plays to the same instructions), or why there is none."""
    protocol = getattr(session, "protocol", None)
    head = Text(
        f"What a model playing the {session.play_as} would be told"
        + (f" ({protocol.describe()})" if protocol is not None else ""),
        style="bold underline",
    )
    try:
        prompt = session.person_prompt()
    except Exception as exc:  # noqa: BLE001 - a protocol without that text says so here, the session goes on
        return Group(head, Text(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, style="red"))
    return Group(head, Text(prompt))


class PlayScreen(Screen[int]):
    """Play one side of a task. ``finish(code)`` is called on leaving (default: dismiss with the code)."""

    BINDINGS = [
        Binding("escape", "leave", "Leave (twice while running: without saving)", id="play.leave"),
        Binding("ctrl+t", "tool", "Call a tool…", id="play.tool"),
        Binding("ctrl+s", "end", "Stop: end the conversation (###STOP###)", id="play.end"),
        Binding("ctrl+o", "open_recording", "Open the saved recording in the inspector", id="play.open"),
        Binding("ctrl+b", "toggle_side", "Brief / live DB", id="play.side"),
        Binding("pageup", "scroll(-1)", "Scroll the conversation up", id="play.page_up", show=False),
        Binding("pagedown", "scroll(1)", "Scroll the conversation down", id="play.page_down", show=False),
    ]

    def __init__(
        self,
        session: PlaySession,
        out: Path,
        *,
        on_saved: Callable[[Path], None] | None = None,
        finish: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.out = Path(out)
        self.on_saved = on_saved
        self.finish = finish
        self.saved: Path | None = None
        self.error: str | None = None
        self.doc: TrajectoryDoc | None = None
        self._state: EnvState | None = None
        self._leave_pressed = 0.0

    @property
    def other(self) -> str:
        spec = self.session.episode.agent_spec if self.session.play_as == "user" else self.session.episode.user_spec
        return spec.model

    def compose(self) -> ComposeResult:
        yield InfoLine(id="play-header")
        with Horizontal(id="play-body"):
            with Vertical(id="play-left"):
                yield TrajectoryView(id="play-conversation")
                yield InfoLine(id="play-status")
                yield Input(
                    placeholder="your message (enter sends) · ctrl+t calls a tool · ctrl+s ends", id="play-input"
                )
            # The person playing the user needs their scenario first; the one playing the agent, the DB.
            first = "play-tab-brief" if self.session.play_as == "user" else "play-tab-db"
            with TabbedContent(id="play-side", initial=first):
                with TabPane("DB (live)", id="play-tab-db"):
                    yield StateTree(id="play-tree")
                    yield RichPane(id="play-change")
                with TabPane("Brief", id="play-tab-brief"):
                    yield RichPane(id="play-brief")
                with TabPane("Prompt", id="play-tab-prompt"):  # the system prompt a model in your place would get
                    yield RichPane(id="play-prompt")
        yield Footer()

    def on_mount(self) -> None:
        session = self.session
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(f" play as {session.play_as} ", style="bold reverse")
        header.append(f"  task {session.task.id} · {session.env.domain_name} · other side: {self.other}")
        header.append(f" · saves to {self.out.name}", style="dim")
        self.query_one("#play-header", InfoLine).set(header)
        self.query_one("#play-conversation").border_title = "conversation"
        protocol = getattr(session.episode, "protocol", None)  # whose prompts the LLM side got
        if protocol is not None:
            self.query_one("#play-conversation").border_subtitle = visible_renderable(
                protocol.describe(), single_line=True
            )
        self.query_one("#play-tree").border_title = "live DB · last change marked"
        self.query_one("#play-brief", RichPane).show(brief_text(session))
        self.query_one("#play-prompt", RichPane).show(visible_renderable(prompt_text(session)))
        self.query_one("#play-input", Input).disabled = True
        self._state = session.env.freeze()
        self.query_one(StateTree).show(self._state, {})
        self.query_one("#play-change", RichPane).show(Text("no DB change yet", style="dim italic"))
        self._status(
            Text(f" starting… {self.other} speaks first" if session.play_as == "agent" else " starting…", style="dim")
        )
        session.on_event = self._post_event
        session.source.on_request = self._post_turn
        self.run_session()

    def _post_event(self, event: Any) -> None:
        self.post_message(SessionEvent(event))

    def _post_turn(self, request: TurnRequest) -> None:
        self.post_message(SessionTurn(request))

    def _status(self, text: Text) -> None:
        self.query_one("#play-status", InfoLine).set(text)

    # --- the episode ----------------------------------------------------------------------------
    @work(exclusive=True, group="play-session", name="play session")
    async def run_session(self) -> None:
        try:
            await self.session.wait()
        except asyncio.CancelledError:
            self.session.abort()
            raise
        except Exception as exc:  # noqa: BLE001 - shown on the screen, nothing is saved
            self.post_message(SessionFinished(f"{type(exc).__name__}: {exc}"))
            return
        try:
            self.saved = await asyncio.to_thread(self.session.save, self.out)
        except OSError as exc:
            self.post_message(SessionFinished(f"not saved: {exc}"))  # a WriteError names the file and the cause
            return
        self.post_message(SessionFinished())

    @on(SessionEvent)
    def _event(self, message: SessionEvent) -> None:
        event = message.event
        if getattr(event, "message", None) is None:
            return
        self.doc = TrajectoryDoc(list(self.session.messages), live=True)
        view = self.query_one(TrajectoryView)
        view.set_doc(self.doc, cursor=len(self.doc) - 1)
        if isinstance(event.message, ToolMessage):
            self._show_db(event.index)

    def _show_db(self, step: int) -> None:
        """Snapshot the live environment and mark what changed since the last snapshot."""
        before, after = self._state, self.session.env.freeze()
        self._state = after
        agent = self._diff(before.agent if before else None, after.agent)
        user = self._diff(before.user if before else None, after.user)
        marks = {
            "agent": marks_for((c.path, c.kind) for c in agent or []),
            "user": marks_for((c.path, c.kind) for c in user or []),
        }
        self.query_one(StateTree).show(after, marks)
        self.query_one("#play-change", RichPane).show(
            Group(
                Text(f"step {step} · DB change", style="bold"),
                render_changes((("agent DB", agent), ("user DB", user)), "no DB change at this step"),
            )
        )

    @staticmethod
    def _diff(before: Any, after: Any) -> list[Change] | None:
        if before is None and after is None:
            return None
        return diff_states(before, after)

    @on(SessionTurn)
    def _turn(self, message: SessionTurn) -> None:
        if self.session.pending is None:
            return
        field = self.query_one("#play-input", Input)
        field.disabled = False
        if self.app.screen is self:
            field.focus()
        tools = len(message.request.tools)
        hint = f" · ctrl+t: one of your {tools} tools" if tools else ""
        self._status(
            Text.assemble(
                (" your turn ", "bold black on green"),
                (f" write a message (enter){hint} · ctrl+s ends the conversation", ""),
            )
        )

    @on(SessionFinished)
    def _finished(self, message: SessionFinished) -> None:
        field = self.query_one("#play-input", Input)
        field.disabled = True
        field.placeholder = "the conversation has ended · ctrl+o opens the recording · esc leaves"
        if message.error:
            self.error = message.error
            self._status(Text(f" session failed: {message.error}", style="bold red"))
            self.notify(message.error, severity="error", timeout=8)
            return
        result = self.session.result
        assert result is not None, "a session that finished without an error holds its simulation"
        reward = self.session.reward
        text = Text(" ended ", style="bold reverse")
        text.append(f" {result.termination_reason} · reward ")
        text.append(
            formats.reward(reward, "unscored"),
            style="yellow" if reward is None else ("bold green" if reward >= 1 - 1e-6 else "bold red"),
        )
        text.append(f" · saved to {self.saved} · ctrl+o opens it · esc leaves", style="dim")
        self._status(text)
        if self.saved is not None and self.on_saved is not None:
            self.on_saved(self.saved)

    # --- the person's turn --------------------------------------------------------------------------
    def _reply(self, send: Callable[[], None]) -> bool:
        """Send a reply; a refused one (ValueError) is shown and nothing is sent."""
        if self.session.pending is None:
            self.notify("not your turn yet", timeout=2)
            return False
        try:
            send()
        except ValueError as exc:
            self.notify(str(exc), severity="error", timeout=5)
            return False
        field = self.query_one("#play-input", Input)
        field.disabled = True
        self._status(Text(f" waiting for {self.other}…", style="dim"))
        return True

    @on(Input.Submitted, "#play-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value
        if self._reply(lambda: self.session.say(text)):
            event.input.value = ""

    def action_tool(self) -> None:
        if self.session.done:
            return
        tools = self.session.tools

        def chosen(result: tuple[str, dict[str, Any]] | None) -> None:
            if result is not None:
                name, arguments = result
                self._reply(lambda: self.session.call_tool(name, arguments))
            elif self.session.pending is not None:
                self.query_one("#play-input", Input).focus()

        self.app.push_screen(ToolFormScreen(tools, self.session.play_as), chosen)

    def action_end(self) -> None:
        if not self.session.done:
            self._reply(self.session.end)

    def action_toggle_side(self) -> None:
        tabs = self.query_one("#play-side", TabbedContent)
        tabs.active = "play-tab-db" if tabs.active == "play-tab-brief" else "play-tab-brief"

    def action_scroll(self, direction: int) -> None:
        view = self.query_one(TrajectoryView)
        view.scroll_to(y=view.scroll_offset.y + direction * max(view.size.height - 2, 1), animate=False)

    def action_open_recording(self) -> None:
        if self.saved is None:
            self.notify("nothing saved yet: the recording is written when the conversation ends", timeout=3)
            return
        cast(RecordingOpener, self.app).open_saved_run(self.saved)

    def action_leave(self) -> None:
        if not self.session.done and self.error is None:
            now = time.monotonic()
            if now - self._leave_pressed > LEAVE_CONFIRM_SECONDS:
                self._leave_pressed = now
                self.notify("the conversation is still running: esc again leaves without saving", timeout=3)
                return
            self.workers.cancel_group(self, "play-session")
            self.session.abort()
            code = EXIT_LEFT
        else:
            code = EXIT_SAVED if self.saved is not None else EXIT_LEFT
        if self.finish is not None:
            self.finish(code)
        else:
            self.dismiss(code)
