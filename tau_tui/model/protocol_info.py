"""Which protocol made a results file, as its ``info`` says, and whether two files' protocols differ.

A rollout's protocol (``rollout.protocol``) is ``tau2`` (tau2's user-simulator guidelines and agent prompt) or
``own`` (tau-tui's prompts). tau-tui records it in ``info.tau_tui.protocol``; a tau-tui run from before that
used our own prompts; a file without a ``tau_tui`` block is tau2's runner's (or a fork's). Every file that keeps
``info.user_info.global_simulation_guidelines`` (tau2 records that text, and so do our tau2-protocol runs) also
gets that text's hash, so a tau2 file and one of ours compare on it. Here, below ``rollout``, so that
``compare`` and the report read it without importing the rollout machinery.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

TAU2, OWN, UNKNOWN = "tau2", "own", "unknown"
TAU_TUI_TOOLS = "tau-tui"  # ``tool_schemas_from`` of a tau2-protocol run that sent our own tool schemas


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recorded_guidelines_sha256(info: Any) -> str | None:
    """The sha256 of ``info.user_info.global_simulation_guidelines``, None when the file keeps no such text."""
    user = info.get("user_info") if isinstance(info, dict) else None
    guidelines = user.get("global_simulation_guidelines") if isinstance(user, dict) else None
    return _sha(guidelines) if isinstance(guidelines, str) else None


def protocol_of_info(info: Any) -> dict[str, Any]:
    """The protocol a results file's ``info`` says made it: ours record it (``tau_tui.protocol``); an older
    tau-tui run without it used our own prompts; a file without a ``tau_tui`` block is tau2's runner's (or a
    fork's). ``recorded_guidelines_sha256``: the hash of the guidelines ``user_info`` records, when it does."""
    if not isinstance(info, dict):
        return {"name": UNKNOWN}
    ours = info.get("tau_tui")
    out: dict[str, Any]
    if isinstance(ours, dict):
        recorded = ours.get("protocol")
        if isinstance(recorded, dict) and isinstance(recorded.get("name"), str):
            out = dict(recorded)
        else:
            out = {"name": OWN, "assumed": "a tau-tui run from before protocols were recorded"}
    else:
        out = {"name": TAU2, "assumed": "made by tau2's runner (or a fork's)"}
    guidelines = recorded_guidelines_sha256(info)
    if guidelines is not None:
        out["recorded_guidelines_sha256"] = guidelines
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class RecordedProtocol:
    """``protocol_of_info`` as a value (hashable: one per file, kept on each of its simulations' outcomes)."""

    name: str
    user_guidelines_sha256: str | None = None  # the texts our run gave the user simulator
    agent_prompt_sha256: str | None = None  # None: no LLM agent was prompted, or the file does not say
    agent_prompt_from: str | None = None
    tool_schemas_from: str | None = None
    tool_schemas_sha256: str | None = None
    recorded_guidelines_sha256: str | None = None  # of ``user_info.global_simulation_guidelines``
    assumed: str | None = None  # why the name is inferred, not recorded

    @classmethod
    def of_info(cls, info: Any) -> RecordedProtocol:
        found = protocol_of_info(info)
        return cls(
            str(found["name"]),
            _text(found.get("user_guidelines_sha256")),
            _text(found.get("agent_prompt_sha256")),
            _text(found.get("agent_prompt_from")),
            _text(found.get("tool_schemas_from")),
            _text(found.get("tool_schemas_sha256")),
            _text(found.get("recorded_guidelines_sha256")),
            _text(found.get("assumed")),
        )

    def text(self) -> str:
        """``protocol tau2``, ``protocol own (tau-tui's prompts)``; ``(assumed)`` when the file does not record it."""
        out = f"protocol {self.name}" + (" (tau-tui's prompts)" if self.name == OWN else "")
        return out + (" (assumed)" if self.assumed else "")

    def differences(self, other: RecordedProtocol) -> list[str]:
        """What of ``other`` differs from this one: ``name``, or the texts both files hash (user-simulator
        guidelines, agent prompt, tool schemas). Empty when they agree or cannot be told apart (an unknown one)."""
        if UNKNOWN in (self.name, other.name):
            return []
        if self.name != other.name:
            return ["name"]
        out = []
        pairs = (
            ("user-simulator guidelines", self.user_guidelines_sha256, other.user_guidelines_sha256),
            ("user-simulator guidelines", self.recorded_guidelines_sha256, other.recorded_guidelines_sha256),
            ("agent prompt", self.agent_prompt_sha256, other.agent_prompt_sha256),
            ("tool schemas", self.tool_schemas_sha256, other.tool_schemas_sha256),
        )
        for what, mine, theirs in pairs:
            if mine is not None and theirs is not None and mine != theirs and what not in out:
                out.append(what)
        ours_tools = {p.tool_schemas_from == TAU_TUI_TOOLS for p in (self, other) if p.tool_schemas_from is not None}
        if len(ours_tools) == 2 and "tool schemas" not in out:
            out.append("tool schemas")
        return out

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def _side_text(protocols: list[RecordedProtocol]) -> str:
    names = list(dict.fromkeys(p.text() for p in protocols))
    return " and ".join(names) if names else "no known protocol"


def protocol_warning(
    a: list[RecordedProtocol], b: list[RecordedProtocol], a_name: str = "A", b_name: str = "B"
) -> str | None:
    """One line when runs ``a`` and ``b`` (each the distinct protocols of its files) ran different protocols, or a
    run mixes them; None when every file of both agrees (or none can be told)."""
    mixed = [name for name, side in ((a_name, a), (b_name, b)) if _differences(side, side)]
    if mixed:
        which = " and ".join(mixed)
        return (
            f"{which} {'mixes' if len(mixed) == 1 else 'mix'} files of different protocols "
            f"({'; '.join(f'{n}: {_side_text(s)}' for n, s in ((a_name, a), (b_name, b)))}): "
            "their scores measure different benchmarks"
        )
    found = _differences(a, b)
    if not found:
        return None
    if "name" in found:
        head = f"{a_name} ran {_side_text(a)}, {b_name} {_side_text(b)}"
    else:
        head = f"{a_name} and {b_name} both ran protocol {a[0].name} but with different {', '.join(found)}"
    return f"{head}: their scores measure different benchmarks"


def _differences(a: list[RecordedProtocol], b: list[RecordedProtocol]) -> list[str]:
    out: list[str] = []
    for x in a:
        for y in b:
            out += [d for d in x.differences(y) if d not in out]
    return out
