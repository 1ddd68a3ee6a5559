"""``tau-tui report``: the static report of three scripted runs, its links, its escaping, and where it may write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tau_tui.cli import main
from tau_tui.report import MARKER, pages
from tau_tui.trust.many import pareto_front
from tests.helpers import greet, results_file, say, user

AGENTS = (("gold", "scripted/gold"), ("flaky5", "scripted/flaky:0.5"), ("flaky3", "scripted/flaky:0.3"))
CHARTS = ("pass-k", "heatmap", "cost-score", "terminations")


def scripted_runs(folder: Path, tau2_data: Path) -> list[Path]:
    """Three k=2 runs of the mock tasks: the scripted gold agent and two flaky ones."""
    paths = []
    for name, agent in AGENTS:
        out = folder / f"{name}.json"
        args = ["run", "--domain", "mock", "--agent-llm", agent, "--user-llm", "scripted/user", "-k", "2"]
        assert main([*args, "--out", str(out), "--tau2-data", str(tau2_data), "--quiet"]) == 0
        paths.append(out)
    return paths


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory, tau2_data: Path) -> list[Path]:
    return scripted_runs(tmp_path_factory.mktemp("runs"), tau2_data)


def report(capsys: pytest.CaptureFixture[str], tau2_data: Path, *args: object) -> tuple[int, str, str]:
    code = main(["report", "--tau2-data", str(tau2_data), *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


def test_report_of_three_runs_links_every_page(
    three_runs: list[Path], tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    code, said, err = report(capsys, tau2_data, *three_runs, "--out", out)
    assert code == 0, err
    assert said.startswith(f"{out / 'index.html'}: 3 runs, 60 simulations")
    index = (out / "index.html").read_text()
    for label in ("scripted/gold (gold.json)", "scripted/flaky:0.5 (flaky5.json)", "scripted/flaky:0.3 (flaky3.json)"):
        assert label in index
    for chart in CHARTS:
        drawn = re.search(rf'<svg class="chart" data-chart="{chart}".*?</svg>', index, re.S)
        assert drawn and 'class="mark' in drawn.group(0), chart
    assert "<script" not in index and "http://" not in index.replace('xmlns="http://www.w3.org/2000/svg"', "")
    # the summary is the many-runs comparison's (the CLI's JSON)
    main(["compare", "--tau2-data", str(tau2_data), *map(str, three_runs), "--json"])
    runs = json.loads(capsys.readouterr().out.splitlines()[-1])["runs"]
    for run in runs[1:]:
        assert f'<td class="n">{run["holm_p"]:.3g}</td>' in index
    # every page links only to pages of the report; every simulation has its page
    seen, queue = set(), [out / "index.html"]
    while queue:
        page = queue.pop()
        if page in seen:
            continue
        seen.add(page)
        text = page.read_text()
        for href in hrefs(text):
            if href.startswith("#"):  # a section of the page itself: it is there
                assert f'id="{href[1:]}"' in text, (page, href)
                continue
            target = (page.parent / href).resolve()
            assert target.is_file() and out.resolve() in target.parents, (page, href)
            queue.append(target)
    sim_pages = [p for p in seen if p.parent.name == "sims"]
    assert len(sim_pages) == 60
    listed = json.loads((out / MARKER).read_text())["files"]
    assert sorted(listed) == sorted(str(p.relative_to(out.resolve())) for p in seen)


def test_simulation_page_shows_the_replay_the_db_diff_and_the_reward(
    three_runs: list[Path], tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert report(capsys, tau2_data, *three_runs, "--out", out)[0] == 0
    index = (out / "index.html").read_text()
    regressed = re.search(r'class="n fail reg"><a href="(runs/2/sims/\d+\.html)"', index)
    assert regressed, "a regressed cell links to the run's simulation of that task"
    page = (out / regressed.group(1)).read_text()
    headings = re.findall(r'<h2 id="(\w+)">([^<(]+)', page)
    assert [h.strip() for _, h in headings] == [
        "Reward explained",  # first: why it scored what it did, before the messages
        "Messages",
        "Replay",
        "Final DB against gold",
        "Findings",
        "Notes",
    ]
    assert all(f'href="#{anchor}"' in page for anchor, _ in headings)  # linked from the top
    assert page.index('href="#reward"') < page.index('<h2 id="reward">')
    assert "scripted/flaky:0.5" in page and "reward 0 recomputed" in page


def test_recorded_text_is_escaped(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "<script>alert(1)</script> <img src=http://example.com/x.png> \x1b[31mred\x1b[0m"
    run = results_file(tmp_path / "hostile.json", [greet(), user(hostile), say(hostile)])
    out = tmp_path / "report"
    code, _, err = report(capsys, tau2_data, run, run, "--out", out, "--recorded")
    assert code == 0, err
    page = (out / "runs" / "1" / "sims" / "0.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page and "<img" not in page
    assert "\x1b" not in page and "\u241b[31m" in page  # the escape made visible, never sent


def test_refuses_a_folder_it_did_not_write_and_replaces_its_own(
    three_runs: list[Path], tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.txt").write_text("mine")
    code, _, err = report(capsys, tau2_data, three_runs[0], "--out", theirs, "--recorded")
    assert code == 2 and "not empty and not a tau-tui report" in err and "Traceback" not in err
    assert [p.name for p in theirs.iterdir()] == ["thesis.txt"]
    out = tmp_path / "report"
    out.mkdir()  # an empty folder is fine
    assert report(capsys, tau2_data, *three_runs[:2], "--out", out, "--recorded")[0] == 0
    assert report(capsys, tau2_data, three_runs[2], three_runs[0], "--out", out, "--recorded")[0] == 0
    assert not (out / "runs" / "3").exists() and "flaky3.json" in (out / "index.html").read_text()
    (out / "runs" / "notes.md").write_text("added by hand")
    code, _, err = report(capsys, tau2_data, *three_runs, "--out", out, "--recorded")
    assert code == 2 and "holds files the report did not write (runs/notes.md" in err
    assert (out / "runs" / "notes.md").read_text() == "added by hand" and not (out / "runs" / "3").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.")]  # no staging folder left


def test_run_pages_are_paginated(
    three_runs: list[Path],
    tau2_data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pages, "SIM_LIST_PAGE", 7)
    out = tmp_path / "report"
    assert report(capsys, tau2_data, three_runs[0], "--out", out, "--recorded")[0] == 0
    listed = sorted((out / "runs" / "1").glob("page-*.html"))
    assert len(listed) == 3  # 20 simulations, 7 a page
    last = (out / "runs" / "1" / "page-3.html").read_text()
    assert len(re.findall(r'href="sims/\d+\.html"', last)) == 6 and "page 3 of 3" in last


def test_bad_baseline_and_unreadable_run_write_nothing(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], three_runs: list[Path]
) -> None:
    out = tmp_path / "report"
    code, _, err = report(capsys, tau2_data, three_runs[0], "--out", out, "--baseline", "other.json")
    assert code == 2 and "--baseline other.json: not one of the runs given" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    code, _, err = report(capsys, tau2_data, three_runs[0], bad, "--out", out)
    assert code == 2 and str(bad) in err and "Traceback" not in err and not out.exists()


def test_pareto_front() -> None:
    # (cost, score): the cheapest best ones; (2, 0.5) is beaten by (1, 0.6), (3, 0.9) is not beaten
    assert pareto_front([(1.0, 0.6), (2.0, 0.5), (3.0, 0.9), (3.0, 0.8)]) == [0, 2]
    assert pareto_front([]) == []


def test_chart_legends_keep_every_label_whole() -> None:
    from html import unescape

    from tau_tui.report import svg

    long = "gpt-4.1-mini-2025-04-14 (sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json)"
    labels = ["short", long]
    charts = [
        svg.line_chart("pass-k", "t", [(label, [svg.Point(1, 0.5)]) for label in labels], "k", "pass^k"),
        svg.scatter("cost-score", "t", [(label, 1.0, 0.5) for label in labels], "cost", "reward"),
        svg.stacked_bars("terminations", "t", [(label, {long: 2, "user_stop": 1}) for label in labels]),
    ]
    for chart in charts:
        box = re.search(r'viewBox="0 0 (\d+) (\d+)"', chart)
        assert box is not None, chart[:80]
        width = float(box.group(1))
        for x, label in re.findall(r'<text x="([\d.]+)"[^>]*>([^<]*)</text>', chart):
            if long in unescape(label):  # drawn whole and inside the chart, at a generous width per character
                assert float(x) + len(unescape(label)) * svg.CHAR_WIDTH <= width, chart[:80]
    short = svg.line_chart("pass-k", "t", [("a", [svg.Point(1, 0.5)])], "k", "pass^k")
    assert 'viewBox="0 0 640 300"' in short  # short labels keep the legend at the right, the chart its size
