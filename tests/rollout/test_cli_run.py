"""``tau-tui run`` as a process: killed mid-way and resumed, secrets never written, one-line errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tau_tui.model.io import open_run
from tests.conftest import ROOT
from tests.rollout.fake_llm import FakeLLM, Reply, Request, error, text

ENV_KEY = "sk-test-env-secret-1234567890abcdef"
ARG_KEY = "sk-test-arg-secret-0987654321fedcba"


def tau_tui(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.Popen[str]:
    full_env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "tau_tui.cli", *args],
        cwd=ROOT,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 180) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def saved_count(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["simulations"])
    except (OSError, ValueError, KeyError):
        return -1


def test_sigkill_leaves_a_valid_file_and_resume_finishes_only_the_missing(
    tau2_data: Path, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("agent-model", [], then=text("All done. Anything else?", delay=0.3))
    out = tmp_path / "run.json"
    args = [
        "run",
        "--domain",
        "mock",
        "--agent-llm",
        "openai/agent-model",
        "--agent-llm-args",
        json.dumps(fake_llm.args()),
        "--user-llm",
        "scripted/user",
        "-k",
        "3",
        "--concurrency",
        "1",
        "--out",
        str(out),
        "--tau2-data",
        str(tau2_data),
        "--quiet",
        "--protocol",  # under tau2 one mock task ends infrastructure_error (tau2's evaluator raises on it)
        "own",
    ]
    proc = tau_tui(*args)
    deadline = time.time() + 120
    while saved_count(out) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    killed = open_run(out)  # valid after the kill
    saved = [e.id for e in killed.entries]
    total = 10 * 3  # tau2 1.0.1's 10 mock tasks, k=3
    assert 3 <= len(saved) < total
    assert all(e.termination == "user_stop" for e in killed.entries)

    fake_llm.script("agent-model", [], then=text("All done. Anything else?"))
    before = len(fake_llm.requests)
    code, stdout, stderr = finish(tau_tui(*args, "--resume"))
    assert code == 0, stderr
    assert f"{total}/{total} simulations ({total - len(saved)} this run)" in stdout
    assert len(fake_llm.requests) - before == total - len(saved)  # one agent turn per missing simulation
    final = open_run(out)
    assert [e.id for e in final.entries[: len(saved)]] == saved
    key_counts = Counter((e.trial, e.task_id, e.seed) for e in final.entries)
    assert len(key_counts) == total and set(key_counts.values()) == {1}
    assert not list(out.parent.glob(".*.tmp"))


def test_no_secret_reaches_any_written_file(tau2_data: Path, tmp_path: Path, fake_llm: FakeLLM) -> None:
    def echo_key(request: Request) -> Reply:
        """The first request of each side is rejected, echoing the key it came with (providers do that)."""
        model = request.model
        if len(fake_llm.requests_for(model)) == 1:
            return error(400, f"Request rejected for caller {request.headers['authorization'].split()[-1]}")
        if model == "agent-model":
            return text("All done. Anything else?")
        closing = "Anything else" in (request.messages[-1].get("content") or "")
        return text("Thanks. ###STOP###" if closing else "Please mark task_1 as completed.")

    fake_llm.script("agent-model", [], then=echo_key)
    fake_llm.script("user-model", [], then=echo_key)
    out = tmp_path / "out" / "rundir"
    agent_args = {**fake_llm.args(), "api_key": ARG_KEY, "extra_headers": {"Authorization": f"Bearer {ARG_KEY}"}}
    user_args = {"api_base": fake_llm.base_url}
    code, stdout, stderr = finish(
        tau_tui(
            "run",
            "--domain",
            "mock",
            "--task",
            "update_task_1",
            "create_task_1",
            "--agent-llm",
            "openai/agent-model",
            "--agent-llm-args",
            json.dumps(agent_args),
            "--user-llm",
            "openai/user-model",
            "--user-llm-args",
            json.dumps(user_args),
            "-k",
            "2",
            "--concurrency",
            "1",
            "--format",
            "dir",
            "--out",
            str(out),
            "--tau2-data",
            str(tau2_data),
            "--protocol",  # its own way: a rejected call ends the simulation, its error kept (tau2 runs it again)
            "own",
            env={"OPENAI_API_KEY": ENV_KEY},
        )
    )
    assert code == 1, stderr  # the rejected simulations are infrastructure errors
    seen = {r.headers["authorization"] for r in fake_llm.requests}
    assert f"Bearer {ARG_KEY}" in seen and f"Bearer {ENV_KEY}" in seen  # both keys were really used

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 5
    for path in written:
        content = path.read_bytes()
        for secret in (ENV_KEY, ARG_KEY, "secret-1234567890", "secret-0987654321"):
            assert secret.encode() not in content, (path, secret)
    for stream in (stdout, stderr):
        assert ENV_KEY not in stream and ARG_KEY not in stream
    meta = json.loads((out / "results.json").read_text())
    assert meta["info"]["agent_info"]["llm_args"] == {
        "api_base": fake_llm.base_url,
        "temperature": 0.0,
        "extra_headers": {},
    }
    run = open_run(out)
    errors = []
    for i, e in enumerate(run.entries):
        if e.termination == "infrastructure_error":
            info = run.simulation(i).info
            assert info is not None
            errors.append(info["error"])
    assert len(errors) == 2 and all("Request rejected for caller ***" in e for e in errors)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--domain", "nowhere", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user"],
            "unknown domain 'nowhere'",
        ),
        (
            ["--domain", "mock", "--task", "nope", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user"],
            "no task 'nope' in domain 'mock'",
        ),
        (
            [
                "--domain",
                "mock",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--agent-llm-args",
                "{x",
            ],
            "--agent-llm-args: not valid JSON",
        ),
        (["--domain", "mock", "--agent-llm", "scripted/gold"], "--user-llm is required"),
        (["--domain", "mock", "--agent-llm", "scripted/nope", "--user-llm", "scripted/user"], "no scripted agent"),
        (
            ["--domain", "mock", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user", "-k", "0"],
            "-k must be at least 1",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tau2_data: Path, tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "x.json"
    code, stdout, stderr = finish(tau_tui("run", *args, "--tau2-data", str(tau2_data), "--out", str(out)))
    assert code == 2
    ours = [line for line in stderr.splitlines() if line.startswith("tau-tui: ")]
    assert len(ours) == 1 and message in ours[0], stderr  # (an installed tau2 may log on import: not ours)
    assert "Traceback" not in stderr
    assert not (tmp_path / "x.json").exists()


def test_run_prints_a_summary_and_refuses_to_overwrite(tau2_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "gold.json"
    code, stdout, stderr = finish(
        tau_tui(
            "run",
            "--domain",
            "mock",
            "--agent-llm",
            "scripted/gold",
            "--user-llm",
            "scripted/user",
            "--task",
            "update_task_1",
            "--out",
            str(out),
            "--tau2-data",
            str(tau2_data),
        )
    )
    assert code == 0, stderr
    assert stdout.strip() == (
        f"{out}: 1/1 simulations (1 this run); average reward 1.000; terminations: user_stop 1; protocol own"
    )
    assert "✓ task update_task_1 trial 0: reward 1" in stderr and "1/1" in stderr
    code, _, stderr = finish(
        tau_tui(
            "run",
            "--domain",
            "mock",
            "--agent-llm",
            "scripted/gold",
            "--user-llm",
            "scripted/user",
            "--out",
            str(out),
            "--tau2-data",
            str(tau2_data),
        )
    )
    assert code == 2 and "already exists; pass --resume" in stderr


def test_cli_and_rollout_core_import_neither_litellm_nor_textual() -> None:
    code = (
        "import sys; import tau_tui.cli as cli; cli.build_parser(); import tau_tui.rollout; "
        "import tau_tui.rollout.console; print([m for m in ('litellm', 'textual') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr
