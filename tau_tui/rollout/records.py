"""Writing rollouts as tau2 results files: run info, secrets kept out, atomic incremental saves.

Secrets never reach a file: model arguments whose key names a credential
(api_key, token, secret, password, authorization...) are dropped from the
recorded ``llm_args``, the values of such arguments and of the environment's
credential variables (``tau_tui.model.secrets``) are blanked wherever else
they appear, and key-shaped strings (``sk-…`` and the like) are blanked
in error details, where a provider may echo the key it was given.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

import orjson

from tau_tui import __version__
from tau_tui.env.environment import Environment
from tau_tui.model.io import id_file, write_atomic
from tau_tui.model.results import SimulationRun
from tau_tui.model.secrets import environment_secrets, public_llm_args, redact
from tau_tui.model.tasks import Task, task_content_digest


def sim_to_dict(sim: SimulationRun, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """A simulation as saved: secrets blanked everywhere, key-shaped strings blanked in ``info``."""
    data: dict[str, Any] = redact(sim.model_dump(mode="json"), secrets)
    if data.get("info"):
        data["info"] = redact(data["info"], secrets, scrub=True)
    return data


def participant_info(info: dict[str, Any], side: str) -> dict[str, Any]:
    """tau2's ``agent_info`` / ``user_info`` with public ``llm_args``."""
    out = {
        "implementation": info.get("implementation"),
        "llm": info.get("llm"),
        "llm_args": public_llm_args(info.get("llm_args")),
        "voice_settings": None,
    }
    if side == "user":
        out["global_simulation_guidelines"] = info.get("global_simulation_guidelines")
        out["persona_config"] = None
    return out


def run_info(
    *,
    domain_name: str,
    policy: str,
    agent: dict[str, Any],
    user: dict[str, Any],
    num_trials: int,
    max_steps: int,
    max_errors: int,
    seed: int | None,
    extra: dict[str, Any] | None = None,
    env_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """tau2's ``info`` block of a results file (our own settings under ``tau_tui``).

    ``env_info``: top-level fields the environment records (``Environment.recorded_info``, e.g. banking's
    ``retrieval_config``).
    """
    info = {
        "git_commit": f"tau-tui-{__version__}",
        "num_trials": num_trials,
        "max_steps": max_steps,
        "max_errors": max_errors,
        "user_info": participant_info(user, "user"),
        "agent_info": participant_info(agent, "agent"),
        "environment_info": {"domain_name": domain_name, "policy": policy, "tool_defs": None},
        "seed": seed,
    }
    info.update(env_info or {})
    if extra:
        info["tau_tui"] = extra
    return info


# --- task fingerprints ---------------------------------------------------------------------
# Recorded in every simulation's ``info`` so results of different task versions are never pooled.
FINGERPRINT_KEY = "task_fingerprint"
FINGERPRINT_PARTS_KEY = "task_fingerprint_parts"
FINGERPRINT_PARTS = ("task", "tools", "db", "policy")


def _digest(data: Any) -> str:
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


def _callable_description(owner: Any, name: str) -> dict[str, Any]:
    member = getattr(owner, name, None)
    signature: str | None = None
    if member is not None:
        try:
            signature = str(inspect.signature(member))
        except (TypeError, ValueError):
            signature = None
    return {"name": name, "signature": signature, "doc": inspect.getdoc(member) if member is not None else None}


def toolkit_description(kit: Any) -> dict[str, Any] | None:
    """What a side's tools look like to a task: names, types, mutating flags, signatures, docstrings, helpers."""
    if kit is None:
        return None
    declared = getattr(kit, "declared_tools", None)
    if not isinstance(declared, dict):
        return {"class": type(kit).__qualname__, "tools": None}
    tools = []
    for name, spec in sorted(declared.items()):
        entry = _callable_description(kit, name)
        entry.update(
            type=getattr(spec.type, "value", str(spec.type)), mutates=spec.mutates_state, discoverable=spec.discoverable
        )
        tools.append(entry)
    helpers = [_callable_description(kit, name) for name in sorted(getattr(kit, "declared_helpers", ()))]
    return {"tools": tools, "helpers": helpers}


@dataclass(frozen=True)
class DomainFingerprint:
    """Hashes of what a domain gives every task: its tools, its pristine DBs and its policy text."""

    tools: str
    db: str
    policy: str


def policy_digest(policy: str | None) -> str:
    return hashlib.sha256((policy or "").encode()).hexdigest()


def domain_fingerprint(env: Environment) -> DomainFingerprint:
    """The domain part of a task fingerprint, from a fresh environment (solo and variant as run)."""
    tools = _digest({"agent": toolkit_description(env.agent), "user": toolkit_description(env.user)})
    db = _digest({"agent": env.db_hash(), "user": env.user_db_hash()})
    return DomainFingerprint(tools, db, policy_digest(env.policy))


def fingerprint_parts(task: Any, domain: DomainFingerprint, policy: str | None = None) -> dict[str, str]:
    """Each part's hash; ``policy`` (a recording's policy text) replaces the domain's when given."""
    return {
        "task": task_content_digest(task),
        "tools": domain.tools,
        "db": domain.db,
        "policy": policy_digest(policy) if policy is not None else domain.policy,
    }


def combine_fingerprint(parts: dict[str, str]) -> str:
    """The task fingerprint: one hash over its parts."""
    return _digest({key: parts.get(key) for key in FINGERPRINT_PARTS})


def fingerprint_info(task: Any, domain: DomainFingerprint) -> dict[str, Any]:
    """What a simulation's ``info`` records about the task version it ran."""
    parts = fingerprint_parts(task, domain)
    return {FINGERPRINT_KEY: combine_fingerprint(parts), FINGERPRINT_PARTS_KEY: parts}


def _dump(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)


def _nested(data: bytes, indent: bytes = b"    ") -> bytes:
    """Pretty JSON re-indented to sit inside a list two levels down."""
    return indent + data.replace(b"\n", b"\n" + indent)


def index_entry(sim: dict[str, Any]) -> dict[str, Any]:
    """tau2's ``SimulationIndexEntry`` of a saved simulation (dir layout)."""
    reward_info = sim.get("reward_info") or {}
    return {
        "id": sim.get("id"),
        "task_id": sim.get("task_id"),
        "trial": sim.get("trial"),
        "reward": reward_info.get("reward"),
        "termination_reason": sim.get("termination_reason"),
        "agent_cost": sim.get("agent_cost"),
        "duration": sim.get("duration"),
    }


def detect_layout(path: Path) -> str:
    """tau2's rule: a directory, or a ``simulations/`` folder beside the file, is the dir layout."""
    if path.is_dir() or (path.parent / "simulations").is_dir() and path.name == "results.json":
        return "dir"
    return "json"


class ResultsWriter:
    """A tau2 results file kept valid at every moment: each ``add`` saves atomically.

    Every value of ``secrets`` and of the environment's credential variables is blanked in what it
    writes. ``layout`` "json" (tau2's default for text runs) rewrites one file per
    simulation; each simulation is serialised and redacted once, so a save
    costs the file's size, not its construction. "dir" writes
    ``simulations/<id>.json`` (the id percent-encoded into one file name inside ``simulations/``,
    ``model.io.id_file``) and then the metadata with its
    ``simulation_index`` (tau2's layout for big runs: a save costs one
    simulation; a kill between the two writes leaves one file the index does
    not list yet, which ``--resume`` takes back in).
    """

    def __init__(
        self,
        path: Path | str,
        info: dict[str, Any],
        tasks: list[Task],
        secrets: Iterable[str] = (),
        layout: str = "json",
        timestamp: str | None = None,
    ):
        if layout not in ("json", "dir"):
            raise ValueError(f"unknown results layout {layout!r}")
        self.layout = layout
        self.path = Path(path)
        if layout == "dir" and self.path.name == "results.json":
            self.path = self.path.parent
        self.secrets = set(secrets) | environment_secrets()
        self.info = redact(info, self.secrets)
        self._timestamp = timestamp or datetime.now().isoformat()
        self.simulations: list[dict[str, Any]] = []
        self._encoded: list[bytes] = []
        self._new = not self.meta_path.exists()  # a file that was not there is created, never replaced
        self._created = self._new  # for remove_if_unused, with the folders this writer makes
        self._made_folders = [f for f in (self.path, self.sims_dir) if layout == "dir" and not f.exists()]
        self._head_bytes: bytes | None = None  # the encoded head, until the timestamp or the tasks change
        self.set_tasks(tasks)

    @property
    def timestamp(self) -> str:
        return self._timestamp

    @timestamp.setter
    def timestamp(self, value: str) -> None:
        self._timestamp = value
        self._head_bytes = None

    @property
    def meta_path(self) -> Path:
        return self.path / "results.json" if self.layout == "dir" else self.path

    @property
    def sims_dir(self) -> Path:
        return self.path / "simulations"

    @property
    def raw_tasks(self) -> list[dict[str, Any]]:
        """The tasks as saved (JSON dicts)."""
        return list(self._tasks)

    def set_tasks(self, tasks: list[Task]) -> None:
        self.tasks = list(tasks)
        self._tasks = [redact(t.model_dump(mode="json"), self.secrets) for t in self.tasks]
        self._head_bytes = None

    def add(self, sim: SimulationRun) -> None:
        self.add_many([sim])

    def add_many(self, sims: Iterable[SimulationRun]) -> None:
        """Save several finished simulations with one write of the file (and of the dir layout's index)."""
        for sim in sims:
            data = sim_to_dict(sim, self.secrets)
            self.simulations.append(data)
            encoded = _dump(data)
            if self.layout == "dir":
                write_atomic(id_file(self.sims_dir, str(data["id"])), encoded + b"\n")
            else:
                self._encoded.append(_nested(encoded))
        self.write()

    def keep(self, raw_simulations: Iterable[dict[str, Any]]) -> None:
        """Carry simulations over from the earlier file of a resumed run, as they were saved."""
        for raw in raw_simulations:
            data = redact(dict(raw), self.secrets)
            self.simulations.append(data)
            encoded = _dump(data)
            if self.layout == "dir":
                target = id_file(self.sims_dir, str(data.get("id")))
                if not target.exists():
                    write_atomic(target, encoded + b"\n")
            else:
                self._encoded.append(_nested(encoded))

    def discard(self, sim_ids: Iterable[str]) -> None:
        """Remove simulation files that are not kept (dir layout: infrastructure errors run again)."""
        if self.layout == "dir":
            for sim_id in sim_ids:
                id_file(self.sims_dir, sim_id).unlink(missing_ok=True)

    def _head(self) -> bytes:
        """The fixed part of the file (timestamp, info, tasks), encoded once."""
        if self._head_bytes is None:
            top = _dump({"timestamp": self.timestamp, "info": self.info, "tasks": self._tasks})
            self._head_bytes = top[:-2]  # without the closing "\n}"
        head: bytes = self._head_bytes
        return head

    def remove_if_unused(self) -> None:
        """Remove the file (and a dir layout's folders) this writer created when no simulation was saved in it."""
        if not self._created or self.simulations:
            return
        self.meta_path.unlink(missing_ok=True)
        for folder in reversed(self._made_folders):
            try:
                folder.rmdir()
            except OSError:  # not empty, or not there: left alone
                pass

    def write(self) -> None:
        if self.layout == "dir":
            self.sims_dir.mkdir(parents=True, exist_ok=True)
            index = _nested(_dump([index_entry(s) for s in self.simulations]), b"  ")[2:]
            write_atomic(
                self.meta_path, self._head() + b',\n  "simulation_index": ' + index + b"\n}\n", replace=not self._new
            )
            self._new = False
            return
        body = b",\n".join(self._encoded)
        sims = b'"simulations": [\n' + body + b"\n  ]" if body else b'"simulations": []'
        write_atomic(self.path, self._head() + b",\n  " + sims + b"\n}\n", replace=not self._new)
        self._new = False
