"""Shared fixtures: the tau2 corpus beside the project, which is also the tau2 data folder."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
ORACLE = CORPUS / "ORACLE.jsonl"

# The corpus stands in for a tau2 data folder; litellm must never reach for the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# tau2's rendered tool schemas (protocol tau2) are kept for the run's tests, not in the real home: one cache for
# every pytest-xdist worker of a run (its writes are atomic), so each domain is rendered once per run.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
if _RUN.isalnum():
    os.environ["XDG_CACHE_HOME"] = os.path.join(tempfile.gettempdir(), f"tau-tui-test-cache-{_RUN}")
    os.makedirs(os.environ["XDG_CACHE_HOME"], exist_ok=True)
else:
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tau-tui-test-cache-")
# The same protocol with and without tau2 installed (auto would pick tau2 only where it is): tests of protocol
# tau2 ask for it by name.
os.environ["TAU_TUI_PROTOCOL"] = "own"
# A settings file on the machine running the tests must not change what they see.
os.environ["TAU_TUI_CONFIG"] = str(ROOT / "tests" / "fixtures" / "no-such-config.toml")


# The tests make test-fast leaves out, by measured duration (scripts/slow_tests.py writes the list).
SLOW_LIST = ROOT / "tests" / "slow.txt"


# The longest tests with their seconds (scripts/slow_tests.py writes it too): make test starts them first.
LONGEST_LIST = ROOT / "tests" / "longest.txt"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests tests/slow.txt lists ``slow`` (a line naming a module marks every test in it); under
    pytest-xdist (make test: ``--dist worksteal``), put the longest tests at the head of each worker's share. Each
    worker collects and reorders alike; the controller schedules the order they report."""
    lines = SLOW_LIST.read_text().splitlines() if SLOW_LIST.is_file() else []
    slow = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    for item in items:
        if item.nodeid in slow or item.nodeid.split("::")[0] in slow:
            item.add_marker(pytest.mark.slow)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers > 1:  # set in each worker (where config.option.dist reads "no")
        items[:] = front_loaded(items, longest_tests(), workers)


def longest_tests() -> dict[str, float]:
    """tests/longest.txt: test id to its seconds in the run it was measured from."""
    lines = LONGEST_LIST.read_text().splitlines() if LONGEST_LIST.is_file() else []
    out = {}
    for line in lines:
        seconds, _, node = line.strip().partition(" ")
        if node and not line.startswith("#"):
            out[node] = float(seconds)
    return out


def worksteal_shares(total: int, workers: int) -> list[int]:
    """How many tests each worker is given first: worksteal splits the collection into even runs, in order (the
    rest is stolen from the end of the longest queue as workers run dry)."""
    shares, left = [], total
    for i in range(workers):
        shares.append(left // (workers - i))
        left -= shares[-1]
    return shares


class _Test(Protocol):
    @property
    def nodeid(self) -> str: ...


TestT = TypeVar("TestT", bound=_Test)


# Tests that must not run beside each other on two workers: each Ray module starts a Ray runtime (or a
# cluster) of its own, and two at once on two cores starve each other (a test of 48 s took 160 s).
SHARED_GROUPS = {"tests/workers/test_ray_": "ray"}


def group_of(nodeid: str) -> str:
    """What a test is moved with: its module (module fixtures are built once, on one worker), or a group of
    modules in ``SHARED_GROUPS``."""
    module = nodeid.split("::")[0]
    return next((group for prefix, group in SHARED_GROUPS.items() if module.startswith(prefix)), module)


def front_loaded(items: list[TestT], longest: dict[str, float], workers: int) -> list[TestT]:
    """``items`` reordered so each worker's first share begins with the groups (``group_of``) holding the
    longest tests, dealt by their seconds, most first, to the worker with the fewest so far; a group's tests
    stay together and in order, the other tests keep their order. A long test left to the end of a share runs
    last and keeps the whole run waiting; at the head, the short ones fill in around it."""
    shares = worksteal_shares(len(items), workers)
    groups: dict[str, list[TestT]] = {}
    weight: dict[str, float] = {}
    for item in items:
        if item.nodeid in longest:
            weight[group_of(item.nodeid)] = weight.get(group_of(item.nodeid), 0.0) + longest[item.nodeid]
    for item in items:
        if group_of(item.nodeid) in weight:
            groups.setdefault(group_of(item.nodeid), []).append(item)
    dealt: list[list[TestT]] = [[] for _ in range(workers)]
    seconds = [0.0] * workers
    for group in sorted(weight, key=lambda g: -weight[g]):
        worker = min(range(workers), key=lambda w: (seconds[w], w))
        dealt[worker] += groups[group]
        seconds[worker] += weight[group]
    if any(len(dealt[w]) > shares[w] for w in range(workers)):
        return items  # a small selection: the order as collected
    rest = iter(item for item in items if group_of(item.nodeid) not in weight)
    out: list[TestT] = []
    for worker in range(workers):
        out += dealt[worker]
        out += [next(rest) for _ in range(shares[worker] - len(dealt[worker]))]
    return out


@pytest.fixture(autouse=True)
def user_data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``$XDG_DATA_HOME`` for every test: notes on bundled recordings never reach the real home (this
    process reads it through the settings, as ``model.runtime``; commands run in a child read the variable);
    the process's file limits are the defaults again after each test."""
    from tau_tui.model import runtime

    home = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    before = runtime.configure(notes_dir=home / "tau-tui" / "notes")
    yield home
    runtime.restore(before)


def corpus_required() -> None:
    if not CORPUS.is_dir():
        pytest.fail(f"the tau2 corpus is missing: expected it at {CORPUS} (shared/ beside the project)")


@pytest.fixture(scope="session")
def tau2_data() -> Path:
    """The tau2 data folder: the corpus's ``domains/`` as it is (tau2 1.0.1's data, see its MANIFEST)."""
    corpus_required()
    return CORPUS


@dataclass(frozen=True)
class CorpusPass:
    """What ``tau-tui COMMAND --json --workers 1 CORPUS`` printed and returned."""

    returncode: int
    stdout: bytes


def corpus_command(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``tau-tui ARGS --tau2-data CORPUS`` in a child of this Python, from the project folder."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run(
        [sys.executable, "-m", "tau_tui", *args, "--tau2-data", str(CORPUS)],
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )


@pytest.fixture(scope="session")
def corpus_eval(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CorpusPass:
    """``tau-tui eval --json --workers 1`` of the whole corpus, made once for the whole run: the first pytest-xdist
    worker to ask makes it under a lock, the others read what it saved (a whole-corpus eval takes seconds of
    CPU, and several tests check its output)."""
    corpus_required()
    shared = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # a pytest-xdist worker: the run's base folder is the parent
        shared = shared.parent
    out, code = shared / "corpus-eval.json-lines", shared / "corpus-eval.returncode"
    with (shared / "corpus-eval.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not code.is_file():
            done = corpus_command("eval", "--json", "--workers", "1", str(CORPUS))
            out.write_bytes(done.stdout)
            code.write_text(str(done.returncode))
        return CorpusPass(int(code.read_text()), out.read_bytes())


@pytest.fixture(scope="session")
def registry(tau2_data: Path) -> DomainRegistry:
    from tau_tui.domains import DomainRegistry

    return DomainRegistry(tau2_data)


@pytest.fixture(scope="session")
def analyzer(registry: DomainRegistry) -> Analyzer:
    from tau_tui.analysis import Analyzer

    return Analyzer(registry)


@pytest.fixture(scope="session")
def oracle_rows() -> list[dict[str, Any]]:
    corpus_required()
    return [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A local Ray instance with 2 CPUs for one test module (the module importorskips ``ray`` first); the
    actors find this tree and the tests' settings through their environment, and keep their temporary files
    (``--ship-data``'s copies) in a folder of the test run."""
    import ray

    ray.init(
        num_cpus=2,
        logging_level="ERROR",
        log_to_driver=False,
        include_dashboard=False,
        runtime_env={
            "env_vars": {
                "PYTHONPATH": str(ROOT),
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "TAU_TUI_CONFIG": os.environ["TAU_TUI_CONFIG"],
                "TMPDIR": str(tmp_path_factory.mktemp("ray-tmp")),
            }
        },
    )
    yield
    ray.shutdown()
