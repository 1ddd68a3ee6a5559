"""The documentation: the site builds with ``mkdocs build --strict``, every page is in its nav, the README stays
short, and every ``tau-tui`` example in a fenced code block of README.md and docs/*.md runs as the docs say.

An example is a line of a fenced block (plain, ``sh`` or ``console``) that starts with ``tau-tui`` (after ``$ ``
in a console block, whose other lines are output, and after any ``VAR=value`` prefixes). A page's examples run in
order in one fresh folder holding a copy of ``recordings/``, so an example may use the files an earlier one wrote.
Each must exit as its comment says (``# exit 1: …``; 0 when it says nothing) and print no traceback.

A file an example names is the corpus file of that name (the corpus's own files are ``<owner>__<repo>__<name>``),
copied in, and ``leaderboard/`` and ``results/`` are folders of corpus runs (FOLDERS). Some lines run as
``tau-tui <command> --help`` instead, each for the reason ``help_reason`` gives: a synopsis (placeholders such as
``PATH``, ``[…]``, ``a|b``, ``...``) and the lines that need a live model, a Ray cluster, a terminal or a server
that runs until stopped. Such a line still checks that its command exists and that every flag it names is in that
command's help. Nothing else is left out.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT

README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
SUBCOMMANDS = {
    "replay",
    "eval",
    "show",
    "run",
    "play",
    "fork",
    "calibrate",
    "notes",
    "compare",
    "report",
    "audit",
    "doctor",
    "export",
    "serve",
}
# Folders the examples name, made of corpus files: runs that replay cleanly, and a retail run in which 1.0.1's
# modify_pending_order_items breaks an invariant (docs/doctor.md's --fail-on example).
FOLDERS = {
    "leaderboard": [f"sierra-research__tau2-bench__e2e_{d}_baseline.json" for d in ("mock", "airline", "retail")],
    "results": ["sierra-research__tau2-bench__gpt-4.1_retail_defautl_gpt-4.1_1trials.json"],
}
# Run by another test, which also compares what it prints with the page (about 10 s: the whole airline run
# replayed and written by duckdb).
ELSEWHERE = {
    "tau-tui export airline.json --out out --format duckdb": (
        "tests/commands/test_cli_export.py::test_the_docs_duckdb_example_runs_as_written runs it and checks its output"
    ),
}
TIMEOUT = 60  # seconds, per example; each takes about a second
MODEL_FLAGS = ("--agent-llm", "--user-llm", "--llm", "--judge", "--judge-llm")


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move the detail to docs/"


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists (``- Title: page.md`` or ``- page.md``), in order."""
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:") :]
    return re.findall(r"^\s*-\s*(?:[^\n]*?:\s*)?([\w./-]+\.md)\s*$", nav, flags=re.M)


def test_every_page_is_in_the_nav() -> None:
    listed = nav_pages()
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(p.name for p in PAGES)


def test_the_site_builds_strict(tmp_path: Path) -> None:
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: the dev extra has it (make test installs it)")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    for page in PAGES:
        built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), built


@dataclass
class Example:
    page: Path
    line: int
    command: str  # as a shell runs it, without the prompt

    @property
    def expected(self) -> int:
        said = re.search(r"#\s*exit (\d)\b", self.command)
        return int(said.group(1)) if said else 0

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


EXAMPLE = re.compile(r"(?:[A-Z_][A-Z0-9_]*=\S+\s+)*tau-tui(?:\s|$)")
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w-]*)")


def examples(page: Path) -> list[Example]:
    """Every ``tau-tui`` line of the page's fenced sh/console blocks, continuation lines joined."""
    found: list[Example] = []
    block: list[tuple[int, str]] | None = None
    language = ""
    for number, line in enumerate(page.read_text().splitlines(), 1):
        fence = FENCE.match(line)
        if fence and block is None:
            block, language = [], fence.group(2)
            continue
        if fence and block is not None:
            if language in ("", "sh", "shell", "bash", "console"):
                found += _block_examples(page, block)
            block = None
            continue
        if block is not None:
            block.append((number, line))
    assert block is None, f"{page}: a code block is never closed"
    return found


def _block_examples(page: Path, block: list[tuple[int, str]]) -> list[Example]:
    console = any(line.startswith("$ ") for _, line in block)
    found: list[Example] = []
    joined: list[tuple[int, str]] = []
    for number, line in block:
        if joined and joined[-1][1].endswith("\\"):
            joined[-1] = (joined[-1][0], joined[-1][1][:-1] + " " + line.strip())
        else:
            joined.append((number, line))
    for number, line in joined:
        if console:
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        if EXAMPLE.match(line):
            found.append(Example(page, number, line))
    return found


def all_examples() -> list[Example]:
    return [example for page in (README, *PAGES) for example in examples(page)]


def words(command: str) -> list[str]:
    return shlex.split(command, comments=True)


def subcommand(tokens: list[str]) -> str | None:
    args = tokens[tokens.index("tau-tui") + 1 :]
    return args[0] if args and args[0] in SUBCOMMANDS else None


def is_synopsis(tokens: list[str]) -> bool:
    return any(
        "[" in t or "]" in t or "..." in t or "…" in t or ("|" in t and t != "|") or re.fullmatch(r"[A-Z][A-Z0-9_]*", t)
        for t in tokens
    )


def help_reason(example: Example) -> str | None:
    """Why the example runs as ``--help`` (None: it runs as written)."""
    tokens = words(example.command)
    sub = subcommand(tokens)
    if is_synopsis(tokens):
        return "a synopsis: placeholders, not values"
    if sub is None:
        return "the TUI itself needs a terminal (tests/tui/ drive it through Pilot)"
    if sub == "serve":
        return (
            "serves until stopped (tests/commands/test_serve_guard.py and tests/commands/test_serve_browser.py run it)"
        )
    if sub == "play":
        return "an interactive session (tests/tui/ and tests/rollout/test_real_model.py play it through Pilot)"
    if "ray" in tokens or any(t.startswith("RAY_ADDRESS=") for t in tokens):
        return "needs a Ray cluster (RAY_ADDRESS=auto; tests/workers/test_ray_cluster.py starts one)"
    models = [tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t in MODEL_FLAGS]
    live = [m for m in models if not m.startswith("scripted/")]
    if live:
        also = " (tests/rollout/test_real_model.py runs it: make test-llm)" if "openai/smollm2" in live else ""
        return f"needs a live model, {live[0]}{also}"
    return None


def test_the_examples_are_found() -> None:
    """The extraction itself: every page that shows commands yields examples, and each kind of line is there."""
    found = all_examples()
    assert len(found) >= 40, len(found)
    pages = {e.page.name for e in found}
    assert {"README.md", "commands.md", "trust.md", "doctor.md", "tour.md", "cassettes.md"} <= pages, pages
    assert any(e.expected == 1 for e in found)
    assert any(help_reason(e) is None for e in found) and any(help_reason(e) for e in found)
    assert set(ELSEWHERE) <= {e.command.strip() for e in found}, "an ELSEWHERE example is no longer in the docs"


def corpus_file(name: str) -> Path | None:
    for candidate in (CORPUS / name, CORPUS / "generated" / name, *sorted(CORPUS.glob(f"*__{name}"))):
        if candidate.is_file():
            return candidate
    return None


def prepare(example: Example, cwd: Path) -> None:
    """Copy in the corpus files and folders the example names and the folder does not hold yet."""
    tokens = words(example.command)
    for i, token in enumerate(tokens):
        head = token.split("/", 1)[0]
        if "/" in token and head in FOLDERS and not (cwd / head).exists():
            (cwd / head).mkdir()
            for name in FOLDERS[head]:
                shutil.copy(CORPUS / name, cwd / head / name.split("__")[-1])
        after_out = i and tokens[i - 1] in ("--out", "-o", ">")
        if "/" not in token and token.endswith((".json", ".eval")) and not after_out and not (cwd / token).exists():
            source = corpus_file(token)
            if source is not None:
                shutil.copy(source, cwd / token)


def flags(tokens: list[str]) -> list[str]:
    named = (re.match(r"\[*(--?[A-Za-z][\w-]*)", t) for t in tokens)
    return [m.group(1) for m in named if m]


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU_TUI_", "RAY_"))}
    bin_dir = home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "tau-tui"  # this tree's tau_tui, whatever the venv has installed
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tau_tui "$@"\n')
    wrapper.chmod(0o755)
    for xdg in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        (home / xdg).mkdir(exist_ok=True)
        env[xdg] = str(home / xdg)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        TAU2_DATA_DIR=str(CORPUS),
        TAU_TUI_CONFIG=str(ROOT / "tests" / "fixtures" / "no-such-config.toml"),
        TAU_TUI_PROTOCOL="own",  # as the suite runs: no tau2 schema rendering (seconds per domain) per example
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        COLUMNS="200",  # help on one line per option, so that every flag can be found in it
    )
    return env


HELP: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}  # one --help run per command, for every page


def run_page(page_examples: list[Example], cwd: Path, env: dict[str, str]) -> list[str]:
    """Run one page's examples in order in ``cwd``; the problems found, one line each."""
    shutil.copytree(ROOT / "recordings", cwd / "recordings", ignore=shutil.ignore_patterns("*.notes.json"))
    problems: list[str] = []
    for example in page_examples:
        if example.command.strip() in ELSEWHERE:
            continue
        tokens = words(example.command)
        reason = help_reason(example)
        if reason is None:
            prepare(example, cwd)
            argv = ["bash", "-c", example.command]
        else:
            sub = subcommand(tokens)
            argv = ["tau-tui", *([sub] if sub else []), "--help"]
        try:
            done = HELP.get(tuple(argv)) or subprocess.run(
                argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
            )
        except subprocess.TimeoutExpired:
            problems.append(f"{example.where}: `{example.command}`: still running after {TIMEOUT} s")
            continue
        if reason is not None:
            HELP[tuple(argv)] = done
        printed = done.stdout + done.stderr
        expected = 0 if reason else example.expected
        shown = f"{example.where}: `{example.command}`" + (f" (as --help: {reason})" if reason else "")
        if done.returncode != expected:
            problems.append(f"{shown}: exit {done.returncode}, the docs say {expected}: {done.stderr[-600:]}")
        if "Traceback" in printed:
            problems.append(f"{shown}: a traceback: {printed[-1500:]}")
        if reason is not None:
            named = flags(tokens[tokens.index("tau-tui") + 1 :])
            missing = [f for f in named if not re.search(re.escape(f) + r"(?![\w-])", done.stdout)]
            if subcommand(tokens) == "notes":  # `notes add|list|…`: each action is one of notes' own
                actions = tokens[tokens.index("notes") + 1].split("|")
                missing += [a for a in actions if a != "..." and a not in done.stdout]
            if missing:
                problems.append(f"{shown}: not in its --help: {', '.join(missing)}")
    return problems


@pytest.mark.corpus
def test_every_example_runs_as_the_docs_say(tau2_data: Path, tmp_path: Path) -> None:
    by_page: dict[Path, list[Example]] = {}
    for example in all_examples():
        by_page.setdefault(example.page, []).append(example)
    env = environment(tmp_path / "home")
    folders = {page: tmp_path / page.stem for page in by_page}
    for folder in folders.values():
        folder.mkdir()
    longest_first = sorted(by_page, key=lambda page: -len(by_page[page]))
    with ThreadPoolExecutor(max_workers=2) as pool:  # two pages at a time: each example is one process
        results = pool.map(lambda page: run_page(by_page[page], folders[page], env), longest_first)
        problems = [problem for page_problems in results for problem in page_problems]
    assert not problems, "\n".join(problems)
