"""Which prompts a rollout's LLM participants get: tau2's (protocol ``tau2``) or ours (protocol ``own``).

Protocol ``tau2`` builds both system prompts as tau2 1.0.1 does, from tau2's own texts found at run time,
never copied here:

- the user simulator's guidelines are the tau2 data folder's ``user_simulator/simulation_guidelines.md``
  (``simulation_guidelines_tools.md`` when the user has tools), followed by the task's scenario;
- the agent's instructions and templates are read from tau2's ``tau2/agent/llm_agent.py`` — an installed
  tau2's, or a file the user names (``agent_prompt`` / ``--agent-prompt``). That file is read as text and
  its string constants taken from its syntax tree: it is never imported or run.

Protocol ``own`` is ``prompts.py``'s texts, in our words. Everything else about an episode (greeting, role
flipping, stop tokens, limits, seeds) is tau2's under either protocol. A run records the protocol and a
hash of each text it used (``ProtocolTexts.record``), so runs made with other prompts are never pooled
unseen.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib.machinery
import json
import os
import string
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from tau_tui.evaluate.judge import JudgeTexts
from tau_tui.llm.litellm_transport import COST_MAP_VARIABLE
from tau_tui.rollout import prompts

TAU2, OWN, AUTO = "tau2", "own", "auto"
PROTOCOLS = (TAU2, OWN)
CHOICES = (AUTO, TAU2, OWN)

GUIDELINES = "simulation_guidelines.md"
GUIDELINES_TOOLS = "simulation_guidelines_tools.md"
PERSONA_MARK = "<PERSONA_GUIDELINES>"  # where tau2 puts a run's persona settings (none: removed)
MAX_PROMPT_FILE = 4 * 1024 * 1024

# The names tau2 1.0.1's ``tau2/agent/llm_agent.py`` gives its agent texts.
_AGENT_CONSTANTS = {
    "instruction": "AGENT_INSTRUCTION",
    "template": "SYSTEM_PROMPT",
    "solo_instruction": "AGENT_SOLO_INSTRUCTION",
    "solo_template": "SYSTEM_PROMPT_SOLO",
}
_SOLO_STOP_TOOL = "done"  # tau2's LLMSoloAgent.STOP_FUNCTION_NAME
_SOLO_STOP_TOKEN = prompts.STOP


class ProtocolError(ValueError):
    """A protocol that cannot be set up (texts missing or unreadable); ``str()`` is one line."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fill(template: str, **values: str) -> str:
    """``template.format(**values)`` for plain named fields only (``{name}``, ``{{`` and ``}}``): a template
    from a file never reaches attributes, indexes or conversions. ``ProtocolError`` for any other field."""
    out: list[str] = []
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ProtocolError(f"agent prompt template: {exc}") from None
    for literal, name, spec, conversion in parts:
        out.append(literal)
        if name is None:
            continue
        if name not in values or spec or conversion:
            raise ProtocolError(f"agent prompt template: unknown field {{{name}}} (known: {', '.join(values)})")
        out.append(values[name])
    return "".join(out)


@dataclass(frozen=True)
class AgentTexts:
    """The agent's texts: tau2's templates (``{agent_instruction}``, ``{domain_policy}``, ``{ticket}``)."""

    template: str
    instruction: str
    solo_template: str | None = None
    solo_instruction: str | None = None
    done_description: str | None = None
    origin: str = ""  # where they came from, for messages ("installed tau2", "--agent-prompt FILE")

    def system_prompt(self, policy: str, solo: bool = False, ticket: str | None = None) -> str:
        if not solo:
            return fill(self.template, agent_instruction=self.instruction, domain_policy=policy)
        if self.solo_template is None or self.solo_instruction is None:
            raise ProtocolError(f"{self.origin}: no solo-mode agent prompt (tau2's llm_agent.py has one)")
        instruction = fill(self.solo_instruction, stop_function_name=_SOLO_STOP_TOOL, stop_token=_SOLO_STOP_TOKEN)
        return fill(self.solo_template, agent_instruction=instruction, domain_policy=policy, ticket=ticket or "")

    def digest(self) -> str:
        parts = [self.template, self.instruction, self.solo_template, self.solo_instruction, self.done_description]
        return _sha(json.dumps(parts))


@dataclass(frozen=True)
class ToolSchemas:
    """What tau2 tells a model about one domain's tools, in tau2's order (``tau2_snapshot.py``'s output)."""

    tau2: str  # the tau2 that rendered them ("tau2 1.0.1")
    agent: tuple[dict[str, Any], ...]
    user: tuple[dict[str, Any], ...]
    solo: tuple[dict[str, Any], ...] | None  # agent + user tools + ``done``; None: no solo mode in tau2
    missing: str | None = None  # why tau2 gave none (a domain its registry does not hold): ours are sent

    def digest(self) -> str:
        return _sha(json.dumps([self.agent, self.user, self.solo], sort_keys=True))


@dataclass(frozen=True)
class ProtocolTexts:
    """The texts of one protocol, resolved once per run (a plain value: it travels to worker processes)."""

    name: str
    guidelines: str = ""
    guidelines_tools: str = ""
    agent: AgentTexts | None = None
    agent_problem: str | None = None  # why ``agent`` is None under protocol tau2 (said when an LLM agent needs it)
    notes: tuple[str, ...] = field(default=())
    tau2_python: str | None = None  # the interpreter whose tau2 renders the tool schemas (``with_tools``)
    tools: ToolSchemas | None = None  # tau2's schemas of the run's domain (``with_tools``); None: ours
    cache_dir: str | None = None  # where tau2's rendered schemas are kept between runs
    judge: JudgeTexts | None = None  # tau2's NL-assertion judge request (from the same tau2); None: ours

    # --- the agent ----------------------------------------------------------------------------------
    def agent_system_prompt(self, policy: str, solo: bool = False, ticket: str | None = None) -> str:
        if self.name == OWN:
            return prompts.agent_system_prompt(policy, solo, ticket)
        if self.agent is None:
            raise ProtocolError(self.agent_problem or "protocol tau2: no agent prompt")
        return self.agent.system_prompt(policy, solo, ticket)

    def done_schema(self) -> dict[str, Any]:
        """The solo agent's ``done`` tool as the protocol describes it to the model."""
        description = prompts.SOLO_DONE_DESCRIPTION
        if self.name == TAU2 and self.agent is not None and self.agent.done_description:
            description = self.agent.done_description
        return {
            "type": "function",
            "function": {
                "name": prompts.SOLO_DONE_TOOL,
                "description": description,
                "parameters": {"properties": {}, "title": "parameters", "type": "object"},
            },
        }

    # --- tools --------------------------------------------------------------------------------------
    def agent_tools(self, ours: list[dict[str, Any]], solo: bool) -> list[dict[str, Any]]:
        """The agent's tool schemas: tau2's list as tau2 sends it (``ours``: our toolkit's, with ``done`` in
        solo mode, used under protocol own or where tau2 gave none)."""
        if self.tools is None or self.tools.missing:
            return ours
        chosen = self.tools.solo if solo else self.tools.agent
        return [dict(schema) for schema in chosen] if chosen is not None else ours

    def user_tools(self, ours: list[dict[str, Any]], include: list[str] | None) -> list[dict[str, Any]]:
        """The user's tool schemas: tau2's, filtered by the task's ``user_tools`` as tau2 filters them."""
        if self.tools is None or self.tools.missing:
            return ours
        wanted = None if include is None else set(include)
        return [dict(s) for s in self.tools.user if wanted is None or s["function"]["name"] in wanted]

    # --- the user simulator -------------------------------------------------------------------------
    def user_guidelines(self, with_tools: bool) -> str:
        """The guidelines as the run records them (tau2 records the file as it is)."""
        if self.name == OWN:
            return prompts.user_guidelines(with_tools)
        return self.guidelines_tools if with_tools else self.guidelines

    def recorded_guidelines(self) -> str:
        """What ``user_info.global_simulation_guidelines`` holds: tau2 records the plain guidelines file."""
        return self.user_guidelines(False)

    def solo_user_record(self, settings: Any | None) -> dict[str, Any]:
        """What a solo run's ``user_info`` records beyond ``dummy_user``: under ``tau2``, as tau2's runner does,
        the user model it was given (``settings``, ``LLMSettings``; none given, none recorded) and the plain
        guidelines, though no user speaks; under ``own``, nothing."""
        if self.name == OWN:
            return {}
        out: dict[str, Any] = {"global_simulation_guidelines": self.recorded_guidelines()}
        if settings is not None:
            out.update(llm=settings.model, llm_args=dict(settings.args))
        return out

    def user_system_prompt(self, scenario: str, with_tools: bool) -> str:
        if self.name == OWN:
            return prompts.user_system_prompt(scenario, with_tools)
        guidelines = self.user_guidelines(with_tools).replace(PERSONA_MARK, "")
        return f"{guidelines}\n\n<scenario>\n{scenario}\n</scenario>"

    # --- what a run records -------------------------------------------------------------------------
    def record(self, with_agent: bool = True) -> dict[str, Any]:
        """``info.tau_tui.protocol``: the protocol and a sha256 of each text it gave (``with_agent``: an LLM
        agent was prompted)."""
        agent_hash: str | None
        agent_from: str | None
        if self.name == OWN:
            agent_hash = _sha(prompts.agent_system_prompt("", False) + prompts.agent_system_prompt("", True))
            user_hash = _sha(prompts.user_guidelines(False) + prompts.user_guidelines(True))
            agent_from = "tau-tui"
        else:
            agent_hash = self.agent.digest() if self.agent is not None else None
            user_hash = _sha(self.guidelines + self.guidelines_tools)
            agent_from = self.agent.origin if self.agent is not None else None
        out: dict[str, Any] = {"name": self.name, "user_guidelines_sha256": user_hash}
        if with_agent:
            out["agent_prompt_sha256"] = agent_hash
            out["agent_prompt_from"] = agent_from
        if self.name == TAU2:
            tau2_tools = self.tools is not None and not self.tools.missing
            out["tool_schemas_from"] = self.tools.tau2 if self.tools is not None and tau2_tools else "tau-tui"
            if self.tools is not None and tau2_tools:
                out["tool_schemas_sha256"] = self.tools.digest()
            elif self.tools is not None:
                out["tool_schemas_why"] = self.tools.missing
            out["judge_prompt_from"] = self.judge.origin if self.judge is not None else "tau-tui"
        return out

    def run_judge(self, judge: Any) -> Any:
        """The NL judge a run of this protocol asks: under tau2 with tau2's judge texts, tau2's request and
        parsing on the model given (``LiteLLMJudge``); any other judge as it is."""
        with_texts = getattr(judge, "with_texts", None)
        return with_texts(self.judge) if self.name == TAU2 and with_texts is not None else judge

    def describe(self) -> str:
        """One line for consoles and forms."""
        if self.name == OWN:
            return "protocol own (tau-tui's prompts)"
        source = self.agent.origin if self.agent is not None else "no agent prompt"
        if self.tools is not None and self.tools.missing:
            tools = f"tau-tui's tool schemas: {self.tools.missing}"
        elif self.tools is not None:
            tools = f"tool schemas from {self.tools.tau2}"
        else:  # rendered per domain when a run starts, by the tau2 the texts came from
            tools = "tool schemas from that tau2" if self.tau2_python is not None else "tau-tui's tool schemas"
        judge = f"judge prompt from {self.judge.origin}" if self.judge is not None else "tau-tui's judge prompt"
        return f"protocol tau2 (tau2's user guidelines; agent prompt from {source}; {tools}; {judge})"

    def with_tools(self, domain: str, variant: str | None, data_root: Path | None) -> ProtocolTexts:
        """This protocol with tau2's tool schemas of ``domain`` (protocol tau2 with a tau2 to ask, once; else as
        it is). ``ProtocolError`` when tau2 cannot render them."""
        if self.name != TAU2 or self.tau2_python is None or data_root is None or self.tools is not None:
            return self
        cache = Path(self.cache_dir) if self.cache_dir else None
        tools = tau2_tool_schemas(Path(self.tau2_python), domain, variant, data_root, cache)
        return dataclasses.replace(self, tools=tools)


OWN_PROTOCOL = ProtocolTexts(OWN)


# --- finding tau2's texts ------------------------------------------------------------------------------


def guidelines_dirs(data_roots: Iterable[Path]) -> list[Path]:
    """Where a tau2 data folder keeps the user-simulator guidelines: ``user_simulator/`` beside ``domains/``
    (``ROOT/user_simulator``, ``ROOT/tau2/user_simulator``, or beside ROOT when ROOT is a ``domains`` folder)."""
    out: list[Path] = []
    for root in data_roots:
        candidates = [root / "user_simulator", root / "tau2" / "user_simulator"]
        if root.name == "domains":
            candidates.insert(0, root.parent / "user_simulator")
        out += [c for c in candidates if (c / GUIDELINES).is_file()]
    return out


def _read_text(path: Path, what: str) -> str:
    try:
        if path.stat().st_size > MAX_PROMPT_FILE:
            raise ProtocolError(f"{path}: {what} is larger than {MAX_PROMPT_FILE // (1024 * 1024)} MiB")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{path}: unreadable {what} ({exc.__class__.__name__})") from None


def _constant(node: ast.expr) -> str | None:
    """A string constant, or a triple-quoted constant with ``.strip()`` called on it, as tau2 writes its prompts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "strip"
        and not node.args
        and not node.keywords
    ):
        inner = _constant(node.func.value)
        return inner.strip() if inner is not None else None
    return None


def _done_docstring(tree: ast.Module) -> str | None:
    """The docstring of the ``done`` tool tau2's solo agent adds (its description to the model)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == _SOLO_STOP_TOOL:
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                return doc.strip()
    return None


def agent_texts_from_source(source: str, origin: str) -> AgentTexts:
    """tau2's agent texts from the text of a ``llm_agent.py`` (its syntax tree; nothing is run)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        raise ProtocolError(f"{origin}: not Python ({exc.__class__.__name__})") from None
    found: dict[str, str] = {}
    wanted = {v: k for k, v in _AGENT_CONSTANTS.items()}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            key = wanted.get(node.targets[0].id)
            value = _constant(node.value)
            if key is not None and value is not None:
                found[key] = value
    missing = [_AGENT_CONSTANTS[k] for k in ("instruction", "template") if k not in found]
    if missing:
        raise ProtocolError(f"{origin}: no {' or '.join(missing)} (is it tau2's agent/llm_agent.py?)")
    return AgentTexts(
        template=found["template"],
        instruction=found["instruction"],
        solo_template=found.get("solo_template"),
        solo_instruction=found.get("solo_instruction"),
        done_description=_done_docstring(tree),
        origin=origin,
    )


def _template_parts(node: ast.expr) -> tuple[tuple[bool, str], ...] | None:
    """An f-string of plain names (``f"...{name}..."``) as (is_field, text) pieces; None for anything else."""
    if not isinstance(node, ast.JoinedStr):
        return None
    parts: list[tuple[bool, str]] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append((False, value.value))
        elif (
            isinstance(value, ast.FormattedValue)
            and isinstance(value.value, ast.Name)
            and value.conversion == -1
            and value.format_spec is None
            and value.value.id in JUDGE_FIELDS
        ):
            parts.append((True, value.value.id))
        else:
            return None
    return tuple(parts)


JUDGE_FIELDS = ("trajectory_str", "nl_assertions")


def judge_texts_from_source(source: str, config_source: str, origin: str) -> JudgeTexts:
    """tau2's judge request from the text of its ``evaluator/evaluator_nl_assertions.py`` (the system prompt and
    the user message's f-string of ``evaluate_nl_assertions``) and of its ``config.py`` (the judge's
    temperature); their syntax trees, nothing is run."""
    try:
        tree, config = ast.parse(source), ast.parse(config_source)
    except (SyntaxError, ValueError) as exc:
        raise ProtocolError(f"{origin}: not Python ({exc.__class__.__name__})") from None
    system: str | None = None
    user: tuple[tuple[bool, str], ...] | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "evaluate_nl_assertions":
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign) and len(inner.targets) == 1 and isinstance(inner.targets[0], ast.Name):
                    if inner.targets[0].id == "system_prompt":
                        system = _constant(inner.value)
                    elif inner.targets[0].id == "user_prompt":
                        user = _template_parts(inner.value)
            break
    temperature: float | None = None
    for node in config.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "DEFAULT_LLM_NL_ASSERTIONS_TEMPERATURE"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, (int, float))
        ):
            temperature = float(node.value.value)
    if system is None or user is None or temperature is None:
        raise ProtocolError(f"{origin}: tau2's judge prompt or temperature not found (another tau2 version?)")
    return JudgeTexts(system, user, temperature, origin)


def tau2_judge_texts(package: Path, origin: str) -> JudgeTexts:
    """``judge_texts_from_source`` of the tau2 package folder ``package``."""
    source = _read_text(package / "evaluator" / "evaluator_nl_assertions.py", "tau2 judge prompt")
    return judge_texts_from_source(source, _read_text(package / "config.py", "tau2 config"), origin)


def agent_texts_from_file(path: Path, origin: str) -> AgentTexts:
    """An agent prompt file: tau2's ``llm_agent.py`` (``.py``), a JSON object of the texts (``template``,
    ``instruction``, optional ``solo_template``, ``solo_instruction``, ``done_description``), or any other
    file as the whole system prompt with ``{domain_policy}`` where the policy goes."""
    text = _read_text(path, "agent prompt")
    if path.suffix == ".py":
        return agent_texts_from_source(text, origin)
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            raise ProtocolError(f"{path}: agent prompt is not JSON") from None
        if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("template", "instruction")):
            raise ProtocolError(f"{path}: an agent prompt JSON needs the strings 'template' and 'instruction'")
        optional = {k: data[k] for k in ("solo_template", "solo_instruction", "done_description") if k in data}
        if not all(isinstance(v, str) for v in optional.values()):
            raise ProtocolError(f"{path}: agent prompt JSON values must be strings")
        return AgentTexts(template=data["template"], instruction=data["instruction"], origin=origin, **optional)
    if "{domain_policy}" not in text:
        raise ProtocolError(f"{path}: an agent prompt template needs {{domain_policy}} where the policy goes")
    return AgentTexts(template=text, instruction="", origin=origin)


def installed_tau2_agent_source() -> Path | None:
    """``tau2/agent/llm_agent.py`` of a tau2 installed beside tau-tui (found, not imported)."""
    try:
        spec = importlib.machinery.PathFinder.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "agent" / "llm_agent.py"
        if candidate.is_file():
            return candidate
    return None


_FIND_TAU2 = (
    "import importlib.util as u; s = u.find_spec('tau2'); "
    "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')"
)


def tau2_package_of(python: Path) -> Path | None:
    """The ``tau2`` package folder another interpreter would import (found without importing it)."""
    try:
        done = subprocess.run([str(python), "-c", _FIND_TAU2], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    return Path(found[0]) if found and found[0] else None


def tau2_data_layout(root: Path, scratch: Path) -> Path:
    """A ``TAU2_DATA_DIR`` for tau2 itself (``tau2/domains``, ``tau2/user_simulator``) over our data root, which
    may hold ``domains/`` directly or be a ``domains`` folder: links in ``scratch`` where the layout differs."""
    root = root.resolve()
    if (root / "tau2" / "domains").is_dir():
        return root
    domains = root if root.name == "domains" else root / "domains"
    guidelines = domains.parent / "user_simulator"
    layout = scratch / hashlib.sha256(str(root).encode()).hexdigest()[:16]
    (layout / "tau2").mkdir(parents=True, exist_ok=True)
    for name, target in (("domains", domains), ("user_simulator", guidelines)):
        link = layout / "tau2" / name
        if target.is_dir() and not link.exists():
            try:
                link.symlink_to(target, target_is_directory=True)
            except FileExistsError:
                pass
    return layout


def _stamp(path: Path) -> list[Any]:
    try:
        info = path.stat()
    except OSError:
        return [str(path), None]
    return [str(path), info.st_mtime_ns, info.st_size]


def _snapshot_key(python: Path, domain: str, variant: str | None, data_root: Path) -> str:
    """What a cached snapshot depends on: the interpreter and its installed packages, the domain's data files."""
    venv = python.parent.parent
    site = sorted(venv.glob("lib/python3*/site-packages"))
    domain_dir = data_root / "domains" / domain if (data_root / "domains").is_dir() else data_root / domain
    files = sorted(domain_dir.iterdir()) if domain_dir.is_dir() else []
    parts = [str(python.resolve()), _stamp(python), [_stamp(p) for p in site], domain, variant]
    parts.append([_stamp(f) for f in files])
    return _sha(json.dumps(parts))


SNAPSHOT_SCRIPT = Path(__file__).with_name("tau2_snapshot.py")


def tau2_tool_schemas(
    python: Path, domain: str, variant: str | None, data_root: Path, cache_dir: Path | None
) -> ToolSchemas:
    """tau2's tool schemas of ``domain`` as ``python``'s tau2 renders them (``tau2_snapshot.py`` run there: some
    seconds), kept in ``cache_dir`` until that interpreter's packages or the domain's data change."""
    key = _snapshot_key(python, domain, variant, data_root)
    cached = cache_dir / "tau2-tools" / f"{key}.json" if cache_dir is not None else None
    data: Any = None
    if cached is not None and cached.is_file():
        try:
            data = json.loads(cached.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
    if not isinstance(data, dict):
        scratch = (cache_dir or Path(tempfile.gettempdir())) / "tau2-data"
        env = {
            "TAU2_DATA_DIR": str(tau2_data_layout(data_root, scratch)),
            COST_MAP_VARIABLE: "True",  # tau2's litellm reads its own price map, as ours does
            "PATH": os.defpath,
        }
        argv = [str(python), str(SNAPSHOT_SCRIPT), domain, variant or ""]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
        except (OSError, subprocess.SubprocessError) as exc:
            raise ProtocolError(f"protocol tau2: could not run {python} ({exc.__class__.__name__})") from None
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            raise ProtocolError(f"protocol tau2: {python}'s tau2 could not render domain '{domain}' ({last})")
        try:
            data = json.loads(lines[-1])
        except ValueError:
            raise ProtocolError(f"protocol tau2: {python}'s tau2 answered no JSON for domain '{domain}'") from None
        if cached is not None:
            _write_atomic(cached, json.dumps(data))
    return _tool_schemas(data, domain)


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as f:
            f.write(text)
        os.replace(f.name, path)
    except OSError:
        pass  # a cache that cannot be written is only slower next time


def _schema_list(value: Any, what: str, domain: str) -> tuple[dict[str, Any], ...]:
    if not isinstance(value, list) or not all(
        isinstance(s, dict) and isinstance(s.get("function"), dict) and isinstance(s["function"].get("name"), str)
        for s in value
    ):
        raise ProtocolError(f"protocol tau2: tau2's {what} tool schemas of domain '{domain}' are not a list of tools")
    return tuple(value)


def _tool_schemas(data: Any, domain: str) -> ToolSchemas:
    if not isinstance(data, dict):
        raise ProtocolError(f"protocol tau2: tau2's tool schemas of domain '{domain}' are not an object")
    if data.get("unknown_domain") is True:
        version = str(data.get("tau2") or "tau2")
        return ToolSchemas(version, (), (), None, missing=f"{version} has no domain '{domain}'")
    solo = data.get("solo_tools")
    return ToolSchemas(
        tau2=str(data.get("tau2") or "tau2"),
        agent=_schema_list(data.get("agent_tools"), "agent", domain),
        user=_schema_list(data.get("user_tools"), "user", domain),
        solo=_schema_list(solo, "solo", domain) if isinstance(solo, list) else None,
    )


def resolve_protocol(
    choice: str | None,
    data_roots: Iterable[Path],
    agent_prompt: Path | None = None,
    agent_prompt_origin: str = "--agent-prompt",
    tau2_python: Path | None = None,
    cache_dir: Path | None = None,
) -> ProtocolTexts:
    """The protocol a run uses: ``choice`` ("auto" or None: ``tau2`` wherever tau2's user-simulator guidelines
    are found and a tau2 to take the agent prompt and tool schemas from — ``tau2_python``'s, or one installed
    beside tau-tui — or ``agent_prompt``; else ``own``). ``ProtocolError`` when ``tau2`` is asked for and the
    guidelines or the named agent prompt cannot be had; a missing agent prompt is kept as ``agent_problem`` and
    said when an LLM agent needs it (a scripted agent does not). Tool schemas come later, per domain
    (``ProtocolTexts.with_tools``)."""
    choice = (choice or AUTO).strip().lower()
    if choice not in CHOICES:
        raise ProtocolError(f"protocol {choice!r} is not one of {', '.join(CHOICES)}")
    if choice == OWN:
        return ProtocolTexts(OWN)
    roots = list(data_roots)
    folders = guidelines_dirs(roots)
    if not folders:
        if choice == AUTO:
            return ProtocolTexts(OWN, notes=("protocol own: no tau2 user-simulator guidelines found",))
        tried = ", ".join(str(r) for r in roots) or "no tau2 data folder set"
        raise ProtocolError(
            f"protocol tau2: no user_simulator/{GUIDELINES} in the tau2 data ({tried}); pass --tau2-data DIR "
            "(a folder holding domains/ and user_simulator/) or choose --protocol own"
        )
    source: Path | None = None
    python: Path | None = None
    if tau2_python is not None:
        package = tau2_package_of(Path(tau2_python))
        if package is None:
            raise ProtocolError(f"--tau2-python {tau2_python}: that Python has no tau2 installed")
        python, source = Path(tau2_python), package / "agent" / "llm_agent.py"
    else:
        source = installed_tau2_agent_source()
        python = Path(sys.executable) if source is not None else None
    if choice == AUTO and source is None and agent_prompt is None:
        note = "protocol own: tau2's data is here but no tau2 is installed (its agent prompt and tool schemas)"
        return ProtocolTexts(OWN, notes=(note,))
    folder = folders[0]
    guidelines = _read_text(folder / GUIDELINES, "user-simulator guidelines")
    tools_path = folder / GUIDELINES_TOOLS
    guidelines_tools = _read_text(tools_path, "user-simulator guidelines") if tools_path.is_file() else guidelines
    agent: AgentTexts | None = None
    problem: str | None = None
    judge: JudgeTexts | None = None
    notes: tuple[str, ...] = ()
    if source is not None and source.is_file():
        origin = "installed tau2" if tau2_python is None else "--tau2-python's tau2"
        try:
            judge = tau2_judge_texts(source.parent.parent, origin)
        except ProtocolError as exc:
            notes = (f"{exc}; NL assertions are judged with tau-tui's prompt",)
    if agent_prompt is not None:
        agent = agent_texts_from_file(Path(agent_prompt), f"{agent_prompt_origin} {Path(agent_prompt).name}")
    elif source is not None and source.is_file():
        origin = "installed tau2" if tau2_python is None else "--tau2-python's tau2"
        agent = agent_texts_from_source(_read_text(source, "tau2 agent prompt"), origin)
    else:
        problem = (
            "protocol tau2: no tau2 agent prompt (no tau2 installed, agent_prompt not set); install tau2 "
            "(pip install 'tau-tui[tau2]'), name a Python with tau2 with --tau2-python, name tau2's "
            "agent/llm_agent.py with --agent-prompt FILE, or choose --protocol own"
        )
    return ProtocolTexts(
        TAU2,
        guidelines,
        guidelines_tools,
        agent,
        problem,
        notes=notes,
        tau2_python=str(python) if python is not None else None,
        cache_dir=str(cache_dir) if cache_dir is not None else None,
        judge=judge,
    )


def protocol_tools(protocol: ProtocolTexts, domain: Any, name: str, env: Any) -> ProtocolTexts:
    """``protocol`` with tau2's tool schemas for an episode of domain ``name`` (``domain``: its loaded ``Domain``)
    on ``env`` (its retrieval variant, as recorded); tau2 reads the domain's own data folder."""
    if protocol.name != TAU2 or protocol.tools is not None or protocol.tau2_python is None:
        return protocol
    data_dir = getattr(domain, "data_dir", None)
    if not isinstance(data_dir, Path) or not data_dir.is_dir():
        return protocol
    variant = env.recorded_info().get("retrieval_config")
    return protocol.with_tools(name, variant if isinstance(variant, str) else None, data_dir.parent)


def protocol_of_info(info: Any) -> dict[str, Any]:
    """The protocol a results file's ``info`` says made it: ours record it (``tau_tui.protocol``); an older
    tau-tui run without it used our own prompts; a file without a ``tau_tui`` block is tau2's runner's (or a
    fork's), whose guidelines ``user_info`` records."""
    if not isinstance(info, dict):
        return {"name": "unknown"}
    ours = info.get("tau_tui")
    if isinstance(ours, dict):
        recorded = ours.get("protocol")
        if isinstance(recorded, dict) and isinstance(recorded.get("name"), str):
            return dict(recorded)
        return {"name": OWN, "assumed": "a tau-tui run from before protocols were recorded"}
    user = info.get("user_info")
    guidelines = user.get("global_simulation_guidelines") if isinstance(user, dict) else None
    out: dict[str, Any] = {"name": TAU2, "assumed": "made by tau2's runner (or a fork's)"}
    if isinstance(guidelines, str):
        out["recorded_guidelines_sha256"] = _sha(guidelines)
    return out
