"""A hostile recording: the mock demo with terminal control sequences in every recorded text.

Escape sequences (clear screen, OSC 0 window title, OSC 52 clipboard write, OSC 8 hyperlink), BEL,
backspace, carriage return, a C1 CSI, a bidi override and rich markup are put into message contents,
simulation and task ids, tool names and arguments, error texts, the agent model, the domain name (a
second file) and notes. ``raw_controls`` finds what must never reach a terminal.
"""

from __future__ import annotations

import copy
import json
import unicodedata
from pathlib import Path
from typing import Any

DEMO = Path(__file__).resolve().parent / "fixtures" / "mock_recordings" / "mock_demo.json"

EVIL = (
    "\x1b[2J\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\x07\b\rX\x9b31m\u202eRTL[bold red]M[/bold red][link=http://evil.example/]L[/link]"
)
"""Every hostile ingredient; its visible forms (␛, \\x9b, \\u202e, ...) are what a screen shows."""
VISIBLE_MARKS = ("␛[2J", "␛]0;PWNED␇", "␛]52;c;", "\\x9b31m", "\\u202e")
MARKUP = "[bold red]M[/bold red]"
"""Shown literally, never read as rich markup."""


def raw_controls(text: str, keep: str = "\n\t") -> list[str]:
    """Characters of ``text`` a terminal would act on: C0/C1 controls, DEL, bidi and format controls."""
    return sorted(
        {
            repr(c)
            for c in text
            if c not in keep and c not in "\u200c\u200d" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")
        }
    )


def _evil_text(content: Any) -> Any:
    return content + " " + EVIL if isinstance(content, str) else content


def hostile_data(domain: str = "mock") -> dict[str, Any]:
    """The demo's results with hostile text everywhere a recording holds text."""
    data: dict[str, Any] = copy.deepcopy(json.loads(DEMO.read_text()))
    data["info"]["agent_info"]["llm"] = "model" + EVIL
    data["info"]["environment_info"]["domain_name"] = domain
    for n, sim in enumerate(data["simulations"]):
        sim["id"] = f"{sim['id']}{EVIL}"
        if n == 1:
            sim["task_id"] = f"task{EVIL}"  # a task the domain does not have: its error names it
        if n == 3:
            sim["termination_reason"] = f"user_stop{EVIL}"
        for message in sim["messages"]:
            message["content"] = _evil_text(message.get("content"))
            for call in message.get("tool_calls") or []:
                if call["name"] == "delete_task":  # the hallucinated tool
                    call["name"] = f"delete_task{EVIL}"
                if isinstance(call.get("arguments"), dict):
                    call["arguments"] = {**call["arguments"], f"arg{EVIL}": f"value{EVIL}"}
        info = sim.get("reward_info") or {}
        if isinstance(info.get("info"), dict):
            info["info"]["note"] = f"note{EVIL}"
    first = data["simulations"][0]["messages"]
    first.insert(
        4,
        {
            "role": "tool",
            "id": "call_users",
            "content": f"Error: boom{EVIL}",
            "requestor": "assistant",
            "error": True,
            "turn_idx": 4,
        },
    )
    return data


def write_hostile(folder: Path, with_notes: bool = True) -> Path:
    """``folder/hostile.json`` (domain mock) and ``folder/hostile_domain.json`` (a hostile domain name),
    with a notes sidecar on the first whose text, author and step are hostile."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hostile.json"
    path.write_text(json.dumps(hostile_data()))
    (folder / "hostile_domain.json").write_text(json.dumps(hostile_data(domain=f"mock{EVIL}")))
    if with_notes:
        from tau_tui.model.notes import NoteBook

        data = hostile_data()
        sim = data["simulations"][0]
        book = NoteBook(path)
        book.add(
            sim["id"], "agent", "other", f"the note{EVIL}", step=1, task_id=sim["task_id"], trial=0, author=f"me{EVIL}"
        )
        book.add(sim["id"], "user", "other", f"whole sim{EVIL}", task_id=sim["task_id"], trial=0)
    return path
