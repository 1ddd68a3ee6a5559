"""``tau-tui show FILE --sim ID``: one trajectory printed whole (text or GitHub Markdown), one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tau_tui.cli import main
from tests.helpers import call, greet, result, results_file, say, user

ROOT = Path(__file__).resolve().parents[2]
AFTERSALES = ROOT / "recordings" / "aftersales.json"
TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}


def show(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["show", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_message_with_call_verdicts_the_replay_and_the_reward(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = show(capsys, AFTERSALES, "--sim", "as-hasty")  # a unique prefix
    assert code == 0, err
    assert "simulation: as-hasty-refund" in out and "recorded reward: 0" in out
    for index in range(12):
        assert f"\n[{index}] " in out
    assert "→ find_customer_by_email  [skipped: a read, not re-run]" in out
    assert "→ get_refund_status  [hallucinated: no such tool]" in out
    assert "→ issue_refund  [replayed]" in out and '{"return_id": "RMA-2006"}' in out
    assert "[5] tool get_refund_status (error)" in out and "Error: Tool 'get_refund_status' not found." in out
    replay, reward = out.split("\nREPLAY\n")[1].split("\nREWARD\n")
    assert "calls: 1 replayed, 0 mismatch, 2 read (not re-run), 1 hallucinated" in replay
    assert "reward 0 recomputed, 0 recorded: agrees" in reward
    assert "expected request_refund_approval(return_id='RMA-2006', method='original_payment'): never called" in reward
    assert "components (recorded → recomputed):" in reward and "ENV_ASSERTION  0 → 0" in reward


def test_a_mismatch_and_a_finding_are_named_where_they_happen(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = results_file(
        tmp_path / "bad.json",
        [
            greet(),
            user("finish task_1"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(dict(TASK_1, title="Other")),
            result("x", "nope"),
            say("Done."),
        ],
    )
    code, out, _ = show(capsys, path, "--sim", "sim-1", "--tau2-data", tau2_data)
    assert code == 0
    assert "→ update_task_status  [MISMATCH: replayed output differs]" in out
    assert "⚠ finding [result_without_call]" in out.split("[4] ")[1].split("[5] ")[0]
    assert "first mismatch at step 3: update_task_status" in out.split("\nREPLAY\n")[1]


def test_long_texts_are_clipped_unless_full(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = "word " * 2000
    path = results_file(tmp_path / "long.json", [greet(), user(long.strip()), say("Done.")])
    code, out, _ = show(capsys, path, "--sim", "sim-1", "--tau2-data", tau2_data)
    assert code == 0 and "… 8,799 more characters (--full shows all)" in out and long.strip() not in out
    code, out, _ = show(capsys, path, "--sim", "sim-1", "--full", "--tau2-data", tau2_data)
    assert code == 0 and long.strip() in out and "--full shows all" not in out


HOSTILE = "Sure.\n```\n</details><script>alert(1)</script>\n```\n| a | b |\n\x1b[2J**not bold** [x](http://e)"


def hostile_file(tmp_path: Path) -> Path:
    return results_file(
        tmp_path / "hostile.json",
        [
            greet(),
            user(HOSTILE),
            call("update_task_status", {"task_id": "task_1", "status": "completed", "note": "```<img src=x>"}),
            result(TASK_1),
            say("Done. <b>ok</b>"),
        ],
        sim_id="evil|<i>sim</i>",
    )


def test_markdown_keeps_recorded_text_inside_its_fences_and_out_of_the_html(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = show(capsys, hostile_file(tmp_path), "--sim", "evil", "--markdown", "--tau2-data", tau2_data)
    assert code == 0 and "\x1b" not in out
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(out)
    fences = [t for t in tokens if t.type == "fence"]
    texts = [t.content for t in fences if t.info == "text"]
    assert any(HOSTILE.replace("\x1b", "␛") == text.rstrip("\n") for text in texts)  # the message, whole, in one
    arguments = [json.loads(t.content) for t in fences if t.info == "json" and '"note"' in t.content]
    assert arguments == [{"task_id": "task_1", "status": "completed", "note": "```<img src=x>"}]
    html = parser.render(out)
    assert "<script>" not in html and "<img" not in html and "<b>ok</b>" not in html and "<i>sim</i>" not in html
    assert "<strong>not bold</strong>" not in html and 'href="http://e"' not in html
    assert html.count("<details>") == 1 and html.count("</details>") == 1  # ours only
    assert "<h3>Simulation evil|&lt;i&gt;sim&lt;/i&gt;</h3>" in html
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) >= 10  # the header table, the reward table and the tool calls table were not broken
    assert "| 2 | update\\_task\\_status | MISMATCH: replayed output differs |" in out  # the note changes the result


def test_text_output_shows_control_characters_never_sends_them(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = show(capsys, hostile_file(tmp_path), "--sim", "evil", "--tau2-data", tau2_data)
    assert code == 0 and "\x1b" not in out and "␛[2J**not bold**" in out


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            [str(AFTERSALES), "--sim", "nosuch"],
            f"tau-tui: {AFTERSALES}: no simulation 'nosuch' in this file",
        ),
        (
            [str(AFTERSALES), "--sim", "as-"],
            f"tau-tui: {AFTERSALES}: --sim 'as-' is ambiguous in this file: 3 simulations start with it: "
            "as-gold-goodwill (task goodwill_for_late_delivery), as-gold-two-returns (task two_returns_one_delayed), "
            "as-hasty-refund (task large_refund_needs_approval)",
        ),
        (["/no/such/file.json", "--sim", "x"], "tau-tui: /no/such/file.json: does not exist"),
    ],
)
def test_an_unknown_simulation_or_file_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = show(capsys, *argv)
    assert code == 2 and out == "" and err == says + "\n"


def test_without_its_domain_the_messages_are_still_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = results_file(tmp_path / "elsewhere.json", [greet(), user("hello"), say("Done.")], domain="nowhere")
    code, out, err = show(capsys, path, "--sim", "sim-1")
    assert code == 2 and "[1] user\n      hello" in out and "not replayed: " in out
    assert err.count("\n") == 1 and err.startswith("tau-tui: not replayed: ")


def test_show_is_in_the_command_list_and_help_stays_light(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["show", "--help"])
    assert done.value.code == 0 and "--markdown" in capsys.readouterr().out
